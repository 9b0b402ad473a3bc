/**
 * The composer's text box with `@` mentions (CONTRACTS C5 "Chatter"): typing `@` and a few
 * letters lists the matching contacts (`name_search` on `Contact`) in a listbox under it, in the
 * WAI-ARIA autocomplete way — the textarea keeps the focus and points at the active option
 * (`aria-activedescendant`); arrows move, Enter or Tab picks, Escape closes. Picking replaces
 * `@letters` with `@Name ` and reports the contact. Ctrl+Enter (⌘Enter) sends.
 */
import { html } from '../../lib/html.js';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';

const SEARCH_DELAY_MS = 150;
const LIMIT = 8;
/** `@` at the start or after a space, then the letters typed so far, up to the caret. */
const TRIGGER = /(^|\s)@([^\s@]{1,40})$/;

/** @typedef {{id: number, display_name: string}} Link */

/**
 * @param {{value: string, onValue: (value: string) => void, onMention: (contact: Link) => void, onSubmit: () => void,
 *   attrs: Record<string, unknown>, disabled?: boolean, placeholder?: string}} props
 */
export function MentionTextarea({ value, onValue, onMention, onSubmit, attrs, disabled = false, placeholder }) {
  const listId = `ff-mentions-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const area = useRef(/** @type {HTMLTextAreaElement | null} */ (null));
  const [query, setQuery] = useState(/** @type {{term: string, start: number} | null} */ (null));
  const [options, setOptions] = useState(/** @type {Link[]} */ ([]));
  const [active, setActive] = useState(0);
  const seq = useRef(0);
  const timer = useRef(/** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined));
  useEffect(() => () => clearTimeout(timer.current), []);

  const close = () => {
    seq.current++;
    clearTimeout(timer.current);
    setQuery(null);
    setOptions([]);
  };

  /** @param {string} text @param {number} caret */
  const look = (text, caret) => {
    const found = TRIGGER.exec(text.slice(0, caret));
    if (!found) {
      close();
      return;
    }
    const term = found[2];
    setQuery({ term, start: caret - term.length - 1 });
    clearTimeout(timer.current);
    const mine = ++seq.current;
    timer.current = setTimeout(async () => {
      try {
        const links = /** @type {Link[]} */ (await api.nameSearch('Contact', { term, limit: LIMIT }));
        if (mine !== seq.current) return;
        setOptions(Array.isArray(links) ? links : []);
        setActive(0);
      } catch {
        if (mine === seq.current) setOptions([]);
      }
    }, SEARCH_DELAY_MS);
  };

  /** @param {Link} contact */
  const pick = (contact) => {
    const el = area.current;
    if (!el || !query) return;
    const caret = el.selectionStart ?? value.length;
    const inserted = `@${contact.display_name} `;
    const next = value.slice(0, query.start) + inserted + value.slice(caret);
    close();
    onValue(next);
    onMention(contact);
    const at = query.start + inserted.length;
    requestAnimationFrame(() => {
      el.focus();
      el.setSelectionRange(at, at);
    });
  };

  const open = query !== null && options.length > 0;
  /** @param {KeyboardEvent} event */
  const onKeyDown = (event) => {
    if (open && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((i) => (i + step + options.length) % options.length);
    } else if (open && (event.key === 'Enter' || event.key === 'Tab') && !event.shiftKey) {
      event.preventDefault();
      pick(options[active] ?? options[0]);
    } else if (query !== null && event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close();
    } else if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      onSubmit();
    }
  };

  const optionId = (/** @type {number} */ i) => `${listId}-${i}`;
  return html`<div class="ff-mention">
    <textarea ref=${area} class="ff-input ff-composer__text" rows="3" ...${attrs} value=${value} disabled=${disabled} placeholder=${placeholder}
      aria-autocomplete="list" aria-controls=${open ? listId : undefined} aria-activedescendant=${open ? optionId(active) : undefined}
      onInput=${(/** @type {InputEvent} */ e) => {
        const el = /** @type {HTMLTextAreaElement} */ (e.currentTarget);
        onValue(el.value);
        look(el.value, el.selectionStart ?? el.value.length);
      }}
      onKeyDown=${onKeyDown}
      onBlur=${close}></textarea>
    <ul id=${listId} class="ff-listbox ff-mention__list" role="listbox" aria-label="Contacts to mention" hidden=${!open}>
      ${open ? options.map((c, i) => html`<li key=${c.id} id=${optionId(i)} role="option" aria-selected=${i === active ? 'true' : 'false'}
          class=${`ff-option${i === active ? ' ff-option-active' : ''}`}
          onMouseDown=${(/** @type {MouseEvent} */ e) => e.preventDefault()} onMouseEnter=${() => setActive(i)} onClick=${() => pick(c)}>
          ${c.display_name}
        </li>`) : null}
    </ul>
  </div>`;
}
