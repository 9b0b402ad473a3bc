/**
 * The command palette (Ctrl+K, ⌘K): a dialog with a combobox filtering every menu the person may
 * open by the words typed (each word must appear in the menu's path, "set us" finds
 * Settings / Users); arrows move through the listbox, Enter opens, Escape closes. WAI-ARIA
 * combobox pattern: the focus stays in the input, the active option is `aria-activedescendant`.
 */
import { html } from '../../lib/html.js';
import { useMemo, useState } from 'preact/hooks';
import { Dialog } from '../ui/dialog.js';

/** @typedef {import('./menu-tree.js').MenuEntry} MenuEntry */

const LIST_ID = 'ff-palette-options';

/** @param {string} text */
const fold = (text) => text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();

/**
 * Entries whose path holds every typed word; those whose own name starts with the first word first.
 * @param {MenuEntry[]} entries @param {string} query
 */
export function filterEntries(entries, query) {
  const words = fold(query).split(/\s+/).filter(Boolean);
  if (!words.length) return entries;
  const matching = entries.filter((e) => {
    const haystack = fold(e.path.join(' '));
    return words.every((w) => haystack.includes(w));
  });
  const first = words[0];
  return [...matching].sort((a, b) => Number(fold(b.name).startsWith(first)) - Number(fold(a.name).startsWith(first)));
}

/** @param {{entries: MenuEntry[], onOpen: (entry: MenuEntry) => void, onClose: () => void}} props */
export function CommandPalette({ entries, onOpen, onClose }) {
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const found = useMemo(() => filterEntries(entries, query), [entries, query]);
  const current = Math.min(active, Math.max(0, found.length - 1));

  /** @param {KeyboardEvent} event */
  const keydown = (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (!found.length) return;
      const step = event.key === 'ArrowDown' ? 1 : -1;
      const next = (current + step + found.length) % found.length;
      setActive(next);
      document.getElementById(`${LIST_ID}-${next}`)?.scrollIntoView({ block: 'nearest' });
    } else if (event.key === 'Home' || event.key === 'End') {
      if (!found.length) return;
      event.preventDefault();
      setActive(event.key === 'Home' ? 0 : found.length - 1);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      if (found[current]) onOpen(found[current]);
    }
  };

  return html`<${Dialog} title="Go to" onClose=${onClose}>
    <div class="ff-palette">
      <label class="ff-visually-hidden" for="ff-palette-input">Search menus</label>
      <input id="ff-palette-input" class="ff-input ff-palette__input" type="text" autocomplete="off" spellcheck=${false}
        role="combobox" aria-expanded="true" aria-controls=${LIST_ID} aria-autocomplete="list"
        aria-activedescendant=${found.length ? `${LIST_ID}-${current}` : undefined}
        placeholder="Type a menu name…" value=${query} autofocus
        onInput=${(/** @type {InputEvent} */ e) => { setQuery(/** @type {HTMLInputElement} */ (e.currentTarget).value); setActive(0); }}
        onKeyDown=${keydown} />
      <ul id=${LIST_ID} class="ff-palette__options" role="listbox" aria-label="Menus">
        ${found.map((entry, i) => html`<li id=${`${LIST_ID}-${i}`} key=${entry.id} role="option" aria-selected=${i === current ? 'true' : 'false'}
            class=${`ff-palette__option${i === current ? ' is-active' : ''}`}
            onMouseMove=${() => i !== current && setActive(i)} onClick=${() => onOpen(entry)}>
            <span class="ff-palette__name">${entry.name}</span>
            ${entry.path.length > 1 ? html`<span class="ff-palette__path">${entry.path.slice(0, -1).join(' / ')}</span>` : null}
          </li>`)}
      </ul>
      ${found.length ? null : html`<p class="ff-palette__none" role="status">No menu matches “${query}”.</p>`}
    </div>
  <//>`;
}
