/**
 * A Datetime (an instant, ISO 8601 UTC on the wire) edited in the browser's time zone with the
 * browser's own date-and-time input; read-only instants are shown in the user's language.
 */
import { html } from '../../lib/html.js';
import { formatDatetime } from '../format.js';
import { controlAttributes } from './control-attributes.js';

/** `2026-11-24T14:05` in local time, what `datetime-local` takes. @param {string | null | undefined} iso */
function localInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** @param {import('./field-props.js').FieldProps} props */
export function DatetimeField(props) {
  const { value, onChange, readonly, lang } = props;
  if (readonly) return html`<output class="ff-readonly" ...${controlAttributes(props)}>${value ? formatDatetime(value, lang) : ''}</output>`;
  return html`<input class="ff-input" type="datetime-local" ...${controlAttributes(props)} value=${localInput(value)}
    onChange=${(/** @type {Event} */ e) => {
      const text = /** @type {HTMLInputElement} */ (e.currentTarget).value;
      onChange(text ? new Date(text).toISOString() : null);
    }} />`;
}
