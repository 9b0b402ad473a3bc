/** A one-line text (Char): the server's `max_length` is the input's limit, so a person cannot type past it. */
import { html } from '../../lib/html.js';
import { controlAttributes } from './control-attributes.js';

const TYPES = /** @type {Record<string, string>} */ ({ email: 'email', url: 'url', phone: 'tel', password: 'password' });

/** @param {import('./field-props.js').FieldProps} props */
export function CharField(props) {
  const { field, value, onChange, readonly, properties } = props;
  const type = TYPES[properties.widget] ?? 'text';
  return html`<input class="ff-input" type=${type} ...${controlAttributes(props)}
    value=${value ?? ''} readOnly=${readonly} maxLength=${field.max_length || undefined}
    autocomplete="off"
    onInput=${(/** @type {InputEvent} */ e) => onChange(/** @type {HTMLInputElement} */ (e.currentTarget).value)} />`;
}
