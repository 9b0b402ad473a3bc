/**
 * Building a field filter: a field, a condition offered for its type, and a value in an input of
 * that type (a date picker for dates, the choices for a selection); Escape or Cancel closes it.
 * The active filters show as
 * removable chips; they combine with AND.
 */
import { html } from '../../../lib/html.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useUniqueId } from './unique-id.js';
import { filterLabel, operator, operatorsFor, parseFilterValue } from './field-filters.js';

/**
 * @typedef {import('./field-filters.js').FieldFilter} FieldFilter
 * @typedef {import('./list-columns.js').RegistryEntry} RegistryEntry
 */

/**
 * @param {{fields: {name: string, label: string, entry: RegistryEntry}[], initial?: string, onAdd: (filter: FieldFilter) => void, onClose: () => void}} props
 * `initial` is the field proposed first (the list's first column).
 */
export function FilterBuilder({ fields, initial, onAdd, onClose }) {
  const id = useUniqueId('ff-list-filter');
  const [fieldName, setFieldName] = useState(fields.find((f) => f.name === initial)?.name ?? fields[0]?.name ?? '');
  const field = fields.find((f) => f.name === fieldName) ?? fields[0];
  const ops = field ? operatorsFor(field.entry) : [];
  const [opName, setOpName] = useState(ops[0]?.op ?? '');
  const op = ops.find((o) => o.op === opName) ?? ops[0];
  const [text, setText] = useState('');
  const [problem, setProblem] = useState(/** @type {string | null} */ (null));
  const first = useRef(/** @type {HTMLSelectElement | null} */ (null));
  useEffect(() => first.current?.focus(), []);

  /** @param {string} name */
  const pickField = (name) => {
    setFieldName(name);
    const next = fields.find((f) => f.name === name);
    setOpName(next ? operatorsFor(next.entry)[0]?.op ?? '' : '');
    setText('');
    setProblem(null);
  };

  /** @param {SubmitEvent} event */
  const submit = (event) => {
    event.preventDefault();
    if (!field || !op) return;
    if (!op.needsValue) {
      onAdd({ field: field.name, op: op.op });
      return;
    }
    const value = parseFilterValue(field.entry, text);
    if (value === undefined) {
      setProblem(text.trim() ? `Not a valid value for ${field.label}.` : 'Enter a value.');
      return;
    }
    onAdd({ field: field.name, op: op.op, value });
  };

  const entry = field?.entry;
  const valueInput = () => {
    if (!op?.needsValue || !entry) return null;
    const common = {
      id: `${id}-value`,
      class: 'ff-input',
      'aria-invalid': problem ? 'true' : undefined,
      'aria-describedby': problem ? `${id}-problem` : undefined,
      value: text,
      onInput: (/** @type {InputEvent} */ e) => {
        setText(/** @type {HTMLInputElement} */ (e.currentTarget).value);
        setProblem(null);
      },
    };
    if (entry.type === 'Selection') {
      return html`<select ...${common}>
        <option value="">—</option>
        ${(entry.choices ?? []).map(([key, label]) => html`<option key=${key} value=${key}>${label}</option>`)}
      </select>`;
    }
    const type = entry.type === 'Date' ? 'date' : entry.type === 'Datetime' ? 'datetime-local' : ['Integer', 'Float', 'Monetary'].includes(entry.type) ? 'number' : 'text';
    return html`<input type=${type} step=${type === 'number' ? 'any' : undefined} ...${common} />`;
  };

  /** @param {KeyboardEvent} event */
  const escape = (event) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    onClose();
  };

  return html`<form class="ff-list-filter-builder" onSubmit=${submit} onKeyDown=${escape} aria-label="Add a filter">
    <div class="ff-field">
      <label class="ff-label" for=${`${id}-field`}>Field</label>
      <select ref=${first} id=${`${id}-field`} class="ff-input" value=${field?.name ?? ''} onChange=${(/** @type {Event} */ e) => pickField(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
        ${fields.map((f) => html`<option key=${f.name} value=${f.name}>${f.label}</option>`)}
      </select>
    </div>
    <div class="ff-field">
      <label class="ff-label" for=${`${id}-op`}>Condition</label>
      <select id=${`${id}-op`} class="ff-input" value=${op?.op ?? ''} onChange=${(/** @type {Event} */ e) => setOpName(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
        ${ops.map((o) => html`<option key=${o.op} value=${o.op}>${o.label}</option>`)}
      </select>
    </div>
    ${op?.needsValue
      ? html`<div class="ff-field">
          <label class="ff-label" for=${`${id}-value`}>Value</label>
          ${valueInput()}
          ${problem ? html`<span id=${`${id}-problem`} class="ff-error-text">${problem}</span>` : null}
        </div>`
      : null}
    <div class="ff-list-filter-actions">
      <button type="submit" class="ff-button ff-button-primary">Add filter</button>
      <button type="button" class="ff-button" onClick=${onClose}>Cancel</button>
    </div>
  </form>`;
}

/**
 * The active filters as chips, each with a button removing it.
 * @param {{filters: FieldFilter[], registry: Record<string, RegistryEntry>, lang: string, onRemove: (index: number) => void, onClear: () => void}} props
 */
export function FilterChips({ filters, registry, lang, onRemove, onClear }) {
  if (!filters.length) return null;
  return html`<ul class="ff-list-chips" aria-label="Active filters">
    ${filters.map((f, index) => {
      const label = filterLabel(f, registry, lang);
      const known = registry[f.field] && operator(f.op);
      return html`<li key=${index} class=${`ff-badge ff-list-chip${known ? '' : ' ff-list-chip-stale'}`}>
        <span>${label}</span>
        <button type="button" class="ff-list-chip-remove" aria-label=${`Remove filter ${label}`} onClick=${() => onRemove(index)}>×</button>
      </li>`;
    })}
    ${filters.length > 1 ? html`<li><button type="button" class="ff-button ff-list-chips-clear" onClick=${onClear}>Clear filters</button></li>` : null}
  </ul>`;
}
