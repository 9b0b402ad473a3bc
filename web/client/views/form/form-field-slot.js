/**
 * What the form's layout draws where its arch names a field (`FormLayout`'s `renderField`): a
 * lines table under its heading for a one-to-many, else the field with its label and widget. An
 * edit goes into the form's values, clears the field's message and asks `ui-effect` when the
 * field has an effect (for lines, when the changed column matters to it); clicking a stage of a
 * saved record's statusbar saves at once.
 */
import { html } from '../../../lib/html.js';
import { FormField } from './form-field.js';
import { LinesTable } from './lines-table.js';

/**
 * @typedef {object} SlotContext
 * @property {import('./form-shape.js').FormShape | null} shape
 * @property {number | null} id
 * @property {boolean} canEdit
 * @property {{fields: Set<string>}} locks
 * @property {Record<string, any>} values
 * @property {{current: Record<string, any>}} valuesRef
 * @property {string | null} lang
 * @property {Record<string, string>} problems
 * @property {Record<string, string>} unreadable
 * @property {string[]} effectFields the model's fields with an effect
 * @property {(name: string, message: string | null) => void} noteUnreadable
 * @property {(update: (v: Record<string, any>) => Record<string, any>) => void} setValues
 * @property {(update: (p: Record<string, string>) => Record<string, string>) => void} setProblems
 * @property {(name: string, value: any) => void} setField
 * @property {(fieldName: string) => void} runEffect
 * @property {(values: Record<string, any>) => Promise<number | null>} save
 */

/** @param {SlotContext} ctx @returns {(name: string, properties: Record<string, any>) => any} */
export function formFieldSlot(ctx) {
  const { shape, values, lang, problems, unreadable } = ctx;
  return (name, properties) => {
    if (!shape || !shape.names.includes(name)) return null;
    const field = shape.fields[name];
    const readonly = !ctx.canEdit || Boolean(field.readonly) || ctx.locks.fields.has(name);
    if (field.type === 'OneToMany') {
      const model = field.related_model ?? '';
      return html`<section class="ff-field ff-field-lines" aria-labelledby=${`lines-${name}`}>
        <h2 class="ff-label" id=${`lines-${name}`}>${field.label ?? name}</h2>
        <${LinesTable} name=${name} label=${field.label ?? name} lines=${values[name] ?? []} registry=${shape.lineFields[model] ?? {}}
          columns=${shape.lineColumns[name] ?? []} readonly=${readonly} lang=${lang} parent=${values} problems=${{ ...unreadable, ...problems }}
          onUnreadable=${ctx.noteUnreadable}
          onChange=${(/** @type {import('./record-values.js').FormLine[]} */ lines, /** @type {{line: string, column: string | null}} */ what) => {
            ctx.setValues((v) => ({ ...v, [name]: lines }));
            ctx.valuesRef.current = { ...ctx.valuesRef.current, [name]: lines };
            ctx.setProblems((p) => Object.fromEntries(Object.entries(p).filter(([k]) => !k.startsWith(`${name}.${what.line}.`) && k !== name)));
            const matters = what.column === null || (shape.lineEffects[name] ?? []).includes(what.column);
            if (matters && ctx.effectFields.includes(name)) ctx.runEffect(name);
          }} />
        ${problems[name] ? html`<p class="ff-error-text" role="alert">${problems[name]}</p>` : null}
      </section>`;
    }
    const statusbar = properties.widget === 'statusbar';
    return html`<${FormField} field=${field} properties=${properties} value=${values[name]} readonly=${readonly}
      problem=${problems[name] ?? unreadable[name]} lang=${lang} record=${values}
      onUnreadable=${(/** @type {string | null} */ message) => ctx.noteUnreadable(name, message)}
      onChange=${(/** @type {any} */ value) => {
        ctx.setField(name, value);
        // Clicking a stage of a saved record moves it there at once, with any other pending edit.
        if (statusbar && ctx.id !== null) void ctx.save({ ...ctx.valuesRef.current, [name]: value });
      }} />`;
  };
}
