/** A multi-line text (Text) that grows with its content up to a sensible height. */
import { html } from '../../lib/html.js';
import { controlAttributes } from './control-attributes.js';

/** @param {import('./field-props.js').FieldProps} props */
export function TextField(props) {
  const { value, onChange, readonly, compact } = props;
  return html`<textarea class="ff-input ff-textarea" ...${controlAttributes(props)} rows=${compact ? 1 : 4}
    readOnly=${readonly} value=${value ?? ''}
    onInput=${(/** @type {InputEvent} */ e) => onChange(/** @type {HTMLTextAreaElement} */ (e.currentTarget).value)}></textarea>`;
}
