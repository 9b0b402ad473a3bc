/**
 * Integer and Float fields. The person types in their language (`1 234,5`); the text is kept as
 * typed while the input has focus and becomes a number when it loses it (or on Enter), so a
 * half-typed `12,` is never rewritten under the cursor. Text that is no number is kept and
 * flagged, never silently dropped.
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { formatNumber } from '../format.js';
import { controlAttributes } from './control-attributes.js';
import { editableNumber, parseNumberText } from './number-text.js';
import { useUnreadable } from './unreadable-text.js';

/**
 * @param {import('./field-props.js').FieldProps & {prefix?: string, suffix?: string, display?: string}} props
 */
export function NumberField(props) {
  const { field, value, onChange, readonly, lang } = props;
  const integer = field.type === 'Integer';
  const digits = integer ? 0 : field.precision;
  const [text, setText] = useState(() => editableNumber(value, lang, digits));
  const [focused, setFocused] = useState(false);
  const [bad, flag] = useUnreadable(props.onUnreadable);

  const message = integer ? 'Type a whole number' : 'Type a number';

  // A value changed from outside (an effect, a reload) shows unless the person is typing; leaving
  // the input does not put the old value back over text that is no number (it stays, flagged).
  useEffect(() => {
    if (focused) return;
    setText(editableNumber(value, lang, digits));
    flag(null);
  }, [value]);

  const commit = () => {
    const parsed = parseNumberText(text, lang, { integer });
    if (parsed === undefined) {
      flag(message);
      return;
    }
    flag(null);
    setText(editableNumber(parsed, lang, digits));
    if (parsed !== value) onChange(parsed);
  };

  if (readonly) {
    const shown = props.display ?? (typeof value === 'number' ? formatNumber(value, { digits, lang }) : '');
    return html`<output class="ff-readonly ff-number" ...${controlAttributes(props)}>${shown}</output>`;
  }
  const attrs = controlAttributes(props);
  const input = html`<input class="ff-input ff-number" type="text" inputmode=${integer ? 'numeric' : 'decimal'} ...${attrs}
    aria-invalid=${bad || props.invalid ? 'true' : undefined}
    title=${bad ? message : undefined}
    value=${text} autocomplete="off"
    onFocus=${() => setFocused(true)}
    onInput=${(/** @type {InputEvent} */ e) => setText(/** @type {HTMLInputElement} */ (e.currentTarget).value)}
    onBlur=${() => { setFocused(false); commit(); }}
    onKeyDown=${(/** @type {KeyboardEvent} */ e) => { if (e.key === 'Enter') commit(); }} />`;
  if (!props.prefix && !props.suffix) return input;
  return html`<span class="ff-affixed">
    ${props.prefix ? html`<span class="ff-affix" aria-hidden="true">${props.prefix}</span>` : null}
    ${input}
    ${props.suffix ? html`<span class="ff-affix" aria-hidden="true">${props.suffix}</span>` : null}
  </span>`;
}
