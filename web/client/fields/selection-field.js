/** A Selection as a native `<select>` of its choices (keyboard and screen readers for free). */
import { html } from '../../lib/html.js';
import { controlAttributes } from './control-attributes.js';

/** @param {import('./field-props.js').FieldProps} props */
export function SelectionField(props) {
  const { field, value, onChange, readonly } = props;
  const choices = field.choices ?? [];
  if (readonly) {
    const label = choices.find(([key]) => key === value)?.[1] ?? value ?? '';
    return html`<output class="ff-readonly" ...${controlAttributes(props)}>${label}</output>`;
  }
  return html`<select class="ff-input" ...${controlAttributes(props)} value=${value ?? ''}
    onChange=${(/** @type {Event} */ e) => onChange(/** @type {HTMLSelectElement} */ (e.currentTarget).value || null)}>
    ${!field.required || value === null || value === undefined ? html`<option value="">${field.required ? 'Choose…' : ''}</option>` : null}
    ${choices.map(([key, label]) => html`<option value=${key} selected=${key === value}>${label}</option>`)}
  </select>`;
}
