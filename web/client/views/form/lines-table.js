/**
 * A OneToMany as an editable table (an order's lines): one row per line with a control per
 * column, "Add a line" and a delete button per row. Each cell's control is labelled by its
 * column (`Product`), so a row reads like a small form; read-only amounts are shown formatted.
 * Changes go up as a whole new list of lines (with the line and column that changed, for the
 * form's `ui-effect`).
 */
import { html } from '../../../lib/html.js';
import { useId } from 'preact/hooks';
import { currencyOf, formatMonetary, formatValue } from '../../format.js';
import { FieldWidget } from '../../fields/field-widget.js';
import { formLine } from './record-values.js';
import { TrashIcon } from '../../ui/icons.js';

/**
 * @typedef {import('../../fields/field-props.js').FieldInfo} FieldInfo
 * @typedef {import('./record-values.js').FormLine} FormLine
 */

/**
 * @param {{
 *   name: string,
 *   label: string,
 *   lines: FormLine[],
 *   registry: Record<string, FieldInfo>,
 *   columns: string[],
 *   readonly: boolean,
 *   lang: string | null,
 *   parent: Record<string, any>,
 *   problems: Record<string, string>,
 *   onChange: (lines: FormLine[], changed: {line: string, column: string | null}) => void,
 *   onUnreadable?: (key: string, message: string | null) => void,
 * }} props `problems` and `onUnreadable` keys are `<name>.<line key>.<column>`
 */
export function LinesTable(props) {
  const { name, label, lines, registry, columns, readonly, lang, parent, problems, onChange, onUnreadable } = props;
  const base = `lines-${useId()}`;

  /** Defaults of a new line from the registry (the server adds what it computes). */
  const newLine = () => {
    /** @type {Record<string, any>} */
    const values = {};
    for (const column of columns) {
      const field = registry[column];
      if (field && field.default !== undefined && typeof field.default !== 'object') values[column] = field.default;
    }
    return formLine(values, false);
  };

  /** @param {FormLine} line @param {string} column @param {any} value */
  const setCell = (line, column, value) => {
    const touched = line.touched?.includes(column) ? line.touched : [...(line.touched ?? []), column];
    onChange(lines.map((l) => (l.key === line.key ? { ...l, touched, values: { ...l.values, [column]: value } } : l)), { line: line.key, column });
  };

  /** A line's amounts are in the order's currency when the line does not carry its symbol yet (a new line). @param {FormLine} line */
  const lineRecord = (line) => {
    const record = { ...line.values };
    for (const column of columns) {
      const field = registry[column];
      if (field?.type === 'Monetary' && field.currency_field && !currencyOf(field, record)) {
        const parentCurrency = parent.currency ?? parent.company_currency;
        if (parentCurrency && typeof parentCurrency === 'object') record[field.currency_field] = parentCurrency;
      }
    }
    return record;
  };

  return html`<div class="ff-lines">
    <div class="ff-lines-scroll">
      <table class="ff-table ff-lines-table">
        <caption class="ff-visually-hidden">${label}</caption>
        <thead><tr>
          ${columns.map((c) => html`<th scope="col" class=${numeric(registry[c]) ? 'ff-num' : ''}>${registry[c]?.label ?? c}</th>`)}
          ${readonly ? null : html`<th scope="col"><span class="ff-visually-hidden">Remove</span></th>`}
        </tr></thead>
        <tbody>
          ${lines.length === 0 ? html`<tr><td class="ff-muted" colspan=${columns.length + 1}>No lines yet.</td></tr>` : null}
          ${lines.map((line, index) => {
            const record = lineRecord(line);
            return html`<tr key=${line.key}>
              ${columns.map((column) => {
                const field = registry[column];
                if (!field) return html`<td></td>`;
                const problemKey = `${name}.${line.key}.${column}`;
                const problem = problems[problemKey];
                const id = `${base}-${index}-${column}`;
                const messageId = `${id}-message`;
                const cellReadonly = readonly || Boolean(field.readonly);
                if (cellReadonly) {
                  const text = field.type === 'Monetary' && typeof line.values[column] === 'number'
                    ? formatMonetary(line.values[column], currencyOf(field, record), lang)
                    : formatValue(field, line.values[column], { lang, record });
                  return html`<td class=${numeric(field) ? 'ff-num' : ''}>${text}</td>`;
                }
                return html`<td class=${numeric(field) ? 'ff-num' : ''}>
                  <${FieldWidget} id=${id} labelId=${id} field=${field} value=${line.values[column]} compact=${true}
                    ariaLabel=${field.label ?? column} readonly=${false} invalid=${Boolean(problem)}
                    describedBy=${problem ? messageId : undefined} lang=${lang} record=${record} properties=${{}}
                    onUnreadable=${onUnreadable ? (/** @type {string | null} */ message) => onUnreadable(problemKey, message) : undefined}
                    onChange=${(/** @type {any} */ value) => setCell(line, column, value)} />
                  ${problem ? html`<p id=${messageId} class="ff-error-text">${problem}</p>` : null}
                </td>`;
              })}
              ${readonly ? null : html`<td class="ff-lines-actions">
                <button type="button" class="ff-icon-button" aria-label=${`Remove line ${index + 1}`} title="Remove this line"
                  onClick=${() => onChange(lines.filter((l) => l.key !== line.key), { line: line.key, column: null })}><${TrashIcon} /></button>
              </td>`}
            </tr>`;
          })}
        </tbody>
      </table>
    </div>
    ${readonly ? null : html`<button type="button" class="ff-button ff-lines-add"
      onClick=${() => {
        const line = newLine();
        onChange([...lines, line], { line: line.key, column: null });
        // The new row's first control, so typing goes on in the line just added.
        setTimeout(() => document.getElementById(`${base}-${lines.length}-${columns[0]}`)?.focus(), 0);
      }}>Add a line</button>`}
  </div>`;
}

/** @param {FieldInfo | undefined} field */
function numeric(field) {
  return Boolean(field && (field.type === 'Integer' || field.type === 'Float' || field.type === 'Monetary'));
}
