/** A Json field: shown as indented JSON; edited as text that must parse before it becomes the value. */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { controlAttributes } from './control-attributes.js';

/** @param {unknown} value */
const pretty = (value) => (value === null || value === undefined ? '' : JSON.stringify(value, null, 2));

/** @param {import('./field-props.js').FieldProps} props */
export function JsonField(props) {
  const { value, onChange, readonly } = props;
  const [text, setText] = useState(() => pretty(value));
  const [bad, setBad] = useState(false);
  useEffect(() => { setText(pretty(value)); setBad(false); }, [value]);
  if (readonly) return html`<pre class="ff-readonly ff-json" ...${controlAttributes(props)}>${pretty(value)}</pre>`;
  return html`<textarea class="ff-input ff-json" rows="6" ...${controlAttributes(props)} aria-invalid=${bad || props.invalid ? 'true' : undefined}
    value=${text} onInput=${(/** @type {InputEvent} */ e) => setText(/** @type {HTMLTextAreaElement} */ (e.currentTarget).value)}
    onBlur=${() => {
      if (!text.trim()) { setBad(false); onChange(null); return; }
      try { onChange(JSON.parse(text)); setBad(false); } catch { setBad(true); }
    }}></textarea>`;
}
