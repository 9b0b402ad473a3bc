/**
 * A Date typed in the user's language format (the placeholder shows it), checked when the input
 * loses focus; the calendar button opens the browser's own date picker. The value is `YYYY-MM-DD`.
 */
import { html } from '../../lib/html.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { controlAttributes } from './control-attributes.js';
import { datePlaceholder, editableDate, parseDateText } from './date-text.js';
import { useUnreadable } from './unreadable-text.js';
import { CalendarIcon } from '../ui/icons.js';

/** @param {import('./field-props.js').FieldProps} props */
export function DateField(props) {
  const { value, onChange, readonly, lang } = props;
  const [text, setText] = useState(() => editableDate(value, lang));
  const [focused, setFocused] = useState(false);
  const [bad, flag] = useUnreadable(props.onUnreadable);
  const picker = useRef(/** @type {HTMLInputElement | null} */ (null));

  // A value set from outside (an effect, a reload) shows unless the person is typing; leaving the
  // input does not put the old value back over text that is no date (it stays, flagged).
  useEffect(() => {
    if (focused) return;
    setText(editableDate(value, lang));
    flag(null);
  }, [value]);

  const commit = () => {
    const parsed = parseDateText(text, lang);
    if (parsed === undefined) {
      flag(`Type a date as ${datePlaceholder(lang)}`);
      return;
    }
    flag(null);
    setText(editableDate(parsed, lang));
    if (parsed !== (value ?? null)) onChange(parsed);
  };

  if (readonly) return html`<output class="ff-readonly" ...${controlAttributes(props)}>${editableDate(value, lang)}</output>`;
  const placeholder = datePlaceholder(lang);
  return html`<span class="ff-affixed ff-date">
    <input class="ff-input" type="text" ...${controlAttributes(props)} aria-invalid=${bad || props.invalid ? 'true' : undefined}
      title=${bad ? `Type a date as ${placeholder}` : undefined}
      placeholder=${placeholder} value=${text} autocomplete="off" inputmode="numeric"
      onFocus=${() => setFocused(true)}
      onInput=${(/** @type {InputEvent} */ e) => setText(/** @type {HTMLInputElement} */ (e.currentTarget).value)}
      onBlur=${() => { setFocused(false); commit(); }}
      onKeyDown=${(/** @type {KeyboardEvent} */ e) => { if (e.key === 'Enter') commit(); }} />
    <button type="button" class="ff-icon-button ff-date-button" aria-label="Choose a date" title="Choose a date"
      onClick=${() => { try { picker.current?.showPicker(); } catch { picker.current?.focus(); } }}><${CalendarIcon} /></button>
    <input ref=${picker} type="date" class="ff-date-picker" tabIndex=${-1} aria-hidden="true" value=${value ?? ''}
      onChange=${(/** @type {Event} */ e) => {
        const picked = /** @type {HTMLInputElement} */ (e.currentTarget).value || null;
        flag(null);
        setText(editableDate(picked, lang));
        if (picked !== (value ?? null)) onChange(picked);
      }} />
  </span>`;
}
