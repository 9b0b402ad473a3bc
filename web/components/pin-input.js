/**
 * `PinInput`: one box per character of a code (spec §4.11, C2). Props: `length` (6), `value` (the
 * whole string), `onInput(next)`, `onComplete(entered)`, `type` (`number`, or `alphanumeric`),
 * `label`, `autoFocus` (true), `disabled` (false), `id` (boxes `<id>-0` … `<id>-<length-1>`), and
 * `name` (a hidden input holding the value, for plain forms).
 *
 * Controlled when given `onInput`: it shows `value` and reports changes, and the owner decides.
 * Without `onInput` (mounted from `data-props`, which cannot carry functions) it keeps its own
 * value, seeded by `value`, and dispatches non-bubbling `input` and `complete` CustomEvents
 * (`detail` = the value) on the element it was mounted into (else on its own group element).
 * The native input events of the boxes do not leave the component.
 *
 * The value has no holes: typing goes to the box under the cursor or the first empty one, and
 * the cursor moves on; Backspace deletes the character of the current box (on an empty box, it
 * steps back and deletes the last one); Delete deletes in place; arrows, Home and End move; a paste or a
 * one-time-code autofill spreads across the boxes (a whole code from the first box). Boxes stay
 * left to right in a right-to-left page: codes are read that way.
 */
import { useContext, useEffect, useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { MountHost } from '../lib/mounting.js';

const ALLOWED = { number: /[0-9]/, alphanumeric: /[A-Za-z0-9]/ };

/**
 * @param {{length?: number, value?: string, onInput?: (next: string) => void, onComplete?: (entered: string) => void,
 *   type?: 'number' | 'alphanumeric', label?: string, autoFocus?: boolean, disabled?: boolean, id?: string, name?: string}} props
 */
export function PinInput(props) {
  const length = Number.isInteger(props.length) && /** @type {number} */ (props.length) > 0 ? /** @type {number} */ (props.length) : 6;
  const type = props.type === 'alphanumeric' ? 'alphanumeric' : 'number';
  const disabled = props.disabled === true;
  const autoFocus = props.autoFocus !== false;
  const generatedId = useId();
  const id = typeof props.id === 'string' && props.id ? props.id : `ff-pin-${generatedId.replace(/[^A-Za-z0-9_-]/g, '')}`;
  const host = useContext(MountHost);
  const controlled = typeof props.onInput === 'function';
  const [own, setOwn] = useState(() => clean(String(props.value ?? ''), type, length));
  const value = controlled ? String(props.value ?? '').slice(0, length) : own;
  const boxes = useRef(/** @type {(HTMLInputElement | null)[]} */ ([]));
  const group = useRef(/** @type {HTMLDivElement | null} */ (null));
  const valueRef = useRef(value);
  valueRef.current = value;

  // Each box shows its character of the value, whatever the browser put there meanwhile (before
  // paint: a box must never show a refused character, nor lag behind the value).
  useLayoutEffect(() => {
    boxes.current.forEach((box, i) => {
      if (box && box.value !== (value[i] ?? '')) box.value = value[i] ?? '';
    });
  });

  useEffect(() => {
    if (autoFocus && !disabled) boxes.current[Math.min(valueRef.current.length, length - 1)]?.focus();
  }, []);

  /** @param {number} index */
  const focusBox = (index) => {
    const box = boxes.current[Math.max(0, Math.min(length - 1, index))];
    box?.focus();
    box?.select();
  };

  /** @param {string} next */
  const change = (next) => {
    if (next === valueRef.current) return;
    valueRef.current = next;
    if (controlled) props.onInput?.(next);
    else {
      setOwn(next);
      emit('input', next);
    }
    if (next.length === length) {
      props.onComplete?.(next);
      if (!controlled) emit('complete', next);
    }
  };

  /** @param {string} name @param {string} detail */
  const emit = (name, detail) => {
    // The element it was mounted into when it is that element's component, else its own group.
    const target = host && group.current?.parentElement === host ? host : group.current;
    target?.dispatchEvent(new CustomEvent(name, { detail, bubbles: false }));
  };

  /** Writes `text` from box `index` on (at most up to the first empty box), then moves on. @param {number} index @param {string} text */
  const insert = (index, text) => {
    const current = valueRef.current;
    const chars = clean(text, type, length);
    if (!chars) return;
    // A whole code (autofill, paste) always fills from the first box.
    const at = chars.length >= length ? 0 : Math.min(index, current.length);
    const next = (current.slice(0, at) + chars + current.slice(at + chars.length)).slice(0, length);
    change(next);
    focusBox(at + chars.length);
  };

  /** @param {number} index */
  const backspace = (index) => {
    const current = valueRef.current;
    // On a character: delete it (the box then holds the next one, or is the first empty box).
    // On an empty box: step back and delete the last character.
    const at = index < current.length ? index : current.length - 1;
    if (at < 0) return;
    change(current.slice(0, at) + current.slice(at + 1));
    focusBox(at);
  };

  /** @param {number} index */
  const deleteAt = (index) => {
    const current = valueRef.current;
    if (index < current.length) change(current.slice(0, index) + current.slice(index + 1));
  };

  /** @param {number} index @param {InputEvent} event */
  const onBoxInput = (index, event) => {
    event.stopPropagation();
    const box = /** @type {HTMLInputElement} */ (event.target);
    const typed = box.value;
    box.value = valueRef.current[index] ?? '';
    const kind = event.inputType ?? '';
    if (kind === 'deleteContentForward') deleteAt(index);
    else if (kind.startsWith('delete')) backspace(index);
    else insert(index, kind === 'insertText' && event.data != null ? event.data : typed);
  };

  /** @param {number} index @param {KeyboardEvent} event */
  const onKeyDown = (index, event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const moves = { ArrowLeft: index - 1, ArrowRight: index + 1, Home: 0, End: valueRef.current.length };
    if (event.key === 'Backspace') {
      event.preventDefault();
      backspace(index);
    } else if (event.key === 'Delete') {
      event.preventDefault();
      deleteAt(index);
    } else if (Object.hasOwn(moves, event.key)) {
      event.preventDefault();
      focusBox(moves[/** @type {keyof typeof moves} */ (event.key)]);
    }
  };

  /** @param {number} index @param {ClipboardEvent} event */
  const onPaste = (index, event) => {
    event.preventDefault();
    insert(index, event.clipboardData?.getData('text') ?? '');
  };

  const labelId = `${id}-label`;
  const noun = type === 'number' ? 'Digit' : 'Character';
  return html`
    <div class="ff-pin" role="group" ref=${group} dir="ltr"
      aria-labelledby=${props.label ? labelId : undefined} aria-label=${props.label ? undefined : 'Verification code'}
      aria-disabled=${disabled ? 'true' : undefined}
      onChange=${(/** @type {Event} */ e) => e.stopPropagation()}>
      ${props.label ? html`<label class="ff-pin__label" id=${labelId} for=${`${id}-0`}>${props.label}</label>` : null}
      <div class="ff-pin__boxes">
        ${Array.from({ length }, (_, i) => html`
          <input id=${`${id}-${i}`} class="ff-pin__box" type="text" value=${value[i] ?? ''}
            ref=${(/** @type {HTMLInputElement | null} */ el) => { boxes.current[i] = el; }}
            inputmode=${type === 'number' ? 'numeric' : 'text'} pattern=${type === 'number' ? '[0-9]*' : '[A-Za-z0-9]*'}
            autocomplete=${i === 0 ? 'one-time-code' : 'off'} autocapitalize="off" autocorrect="off" spellcheck=${false}
            aria-label=${`${noun} ${i + 1} of ${length}`} disabled=${disabled}
            onInput=${(/** @type {InputEvent} */ e) => onBoxInput(i, e)}
            onKeyDown=${(/** @type {KeyboardEvent} */ e) => onKeyDown(i, e)}
            onPaste=${(/** @type {ClipboardEvent} */ e) => onPaste(i, e)}
            onFocus=${(/** @type {FocusEvent} */ e) => /** @type {HTMLInputElement} */ (e.target).select()} />`)}
      </div>
      ${props.name ? html`<input type="hidden" name=${props.name} value=${value} />` : null}
    </div>`;
}

/** The characters of `text` the type allows, at most `length`. @param {string} text @param {'number' | 'alphanumeric'} type @param {number} length */
function clean(text, type, length) {
  return [...text].filter((c) => ALLOWED[type].test(c)).join('').slice(0, length);
}
