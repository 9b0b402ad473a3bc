/**
 * Picks a record of another model by typing part of its name: the WAI-ARIA combobox pattern (an
 * input with `role="combobox"` controlling a `role="listbox"`; arrows move the active option,
 * Enter picks it, Escape closes), fed by `name_search` as the person types. When the caller may
 * create records of that model, the last option is `Create "<typed text>"`, which creates the
 * record by its name at once and picks it. The many-to-one field and the tags field share it.
 */
import { html } from '../../lib/html.js';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { modelRights } from './model-rights.js';
import { notify } from './notify.js';

const SEARCH_DELAY_MS = 180;
const LIMIT = 8;

/**
 * @typedef {{id: number, display_name: string}} Link
 * @typedef {{kind: 'record', link: Link} | {kind: 'create', term: string}} Option
 */

/**
 * @param {{
 *   model: string,
 *   filter?: string,
 *   excludeIds?: number[],
 *   text: string,
 *   onText: (text: string) => void,
 *   onPick: (link: Link) => void,
 *   onLeave?: (text: string) => void,
 *   onBackspaceEmpty?: () => void,
 *   inputAttributes: Record<string, unknown>,
 *   placeholder?: string,
 *   readonly?: boolean,
 * }} props
 */
export function RecordAutocomplete(props) {
  const { model, filter, excludeIds = [], text, onText, onPick, inputAttributes, readonly } = props;
  const listId = `choices-${useId()}`;
  const [open, setOpen] = useState(false);
  const [options, setOptions] = useState(/** @type {Option[]} */ ([]));
  const [active, setActive] = useState(-1);
  const [busy, setBusy] = useState(false);
  const [recName, setRecName] = useState('name');
  const searchSeq = useRef(0);
  const timer = useRef(/** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined));

  useEffect(() => () => clearTimeout(timer.current), []);

  /** @param {string} term */
  const search = (term) => {
    clearTimeout(timer.current);
    const seq = ++searchSeq.current;
    timer.current = setTimeout(async () => {
      setBusy(true);
      try {
        const [rights, found] = await Promise.all([
          modelRights(model),
          api.nameSearch(model, { term, limit: LIMIT + excludeIds.length, ...(filter ? { filter } : {}) }),
        ]);
        if (seq !== searchSeq.current) return;
        const links = /** @type {Link[]} */ (found).filter((l) => !excludeIds.includes(l.id)).slice(0, LIMIT);
        const trimmed = term.trim();
        const creatable = Boolean(rights?.create) && trimmed !== '' && !links.some((l) => l.display_name.toLowerCase() === trimmed.toLowerCase());
        setRecName(rights?.rec_name || 'name');
        /** @type {Option[]} */
        const next = links.map((link) => ({ kind: 'record', link }));
        if (creatable) next.push({ kind: 'create', term: trimmed });
        setOptions(next);
        setActive(next.length ? 0 : -1);
        setOpen(true);
      } catch (err) {
        if (seq === searchSeq.current) {
          setOptions([]);
          setOpen(false);
          notify.error(err instanceof Error ? err.message : String(err));
        }
      } finally {
        if (seq === searchSeq.current) setBusy(false);
      }
    }, SEARCH_DELAY_MS);
  };

  const close = () => {
    searchSeq.current++;
    clearTimeout(timer.current);
    setOpen(false);
    setActive(-1);
    setBusy(false);
  };

  /** @param {Option} option */
  const choose = async (option) => {
    close();
    if (option.kind === 'record') {
      onPick(option.link);
      return;
    }
    try {
      const created = /** @type {Link} */ (await api.create(model, { [recName]: option.term }));
      onPick({ id: created.id, display_name: created.display_name ?? option.term });
    } catch (err) {
      notify.error(`Could not create "${option.term}": ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  /** @param {KeyboardEvent} e */
  const onKeyDown = (e) => {
    if (readonly) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!open) {
        search(text);
        return;
      }
      if (!options.length) return;
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((i) => (i + step + options.length) % options.length);
    } else if (e.key === 'Enter') {
      if (open && active >= 0 && options[active]) {
        e.preventDefault();
        void choose(options[active]);
      }
    } else if (e.key === 'Escape') {
      if (open) {
        e.preventDefault();
        e.stopPropagation(); // the dialog around it stays open
        close();
      }
    } else if (e.key === 'Backspace' && text === '' && props.onBackspaceEmpty) {
      props.onBackspaceEmpty();
    }
  };

  const optionId = (/** @type {number} */ i) => `${listId}-${i}`;
  return html`<span class="ff-autocomplete">
    <input class="ff-input" type="text" role="combobox" autocomplete="off" ...${inputAttributes}
      aria-autocomplete="list" aria-expanded=${open ? 'true' : 'false'} aria-controls=${listId}
      aria-activedescendant=${open && active >= 0 ? optionId(active) : undefined}
      aria-busy=${busy ? 'true' : undefined}
      placeholder=${props.placeholder} readOnly=${readonly} value=${text}
      onInput=${(/** @type {InputEvent} */ e) => {
        const next = /** @type {HTMLInputElement} */ (e.currentTarget).value;
        onText(next);
        search(next);
      }}
      onFocus=${() => { if (!readonly && !text) search(''); }}
      onKeyDown=${onKeyDown}
      onBlur=${() => { close(); props.onLeave?.(text); }} />
    <ul class="ff-listbox" role="listbox" id=${listId} hidden=${!open}>
      ${open && !options.length ? html`<li class="ff-listbox-empty" role="presentation">${busy ? 'Searching…' : 'No match'}</li>` : null}
      ${options.map((option, i) => html`<li role="option" id=${optionId(i)} aria-selected=${i === active ? 'true' : 'false'}
          class=${`ff-option${i === active ? ' ff-option-active' : ''}${option.kind === 'create' ? ' ff-option-create' : ''}`}
          onMouseDown=${(/** @type {MouseEvent} */ e) => e.preventDefault()}
          onMouseEnter=${() => setActive(i)}
          onClick=${() => void choose(option)}>
          ${option.kind === 'record' ? option.link.display_name : `Create "${option.term}"`}
        </li>`)}
    </ul>
  </span>`;
}
