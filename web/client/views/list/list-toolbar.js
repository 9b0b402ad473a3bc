/**
 * Above the table: the list's title (for screen readers: the breadcrumbs show it) and `New`, the search box (name_search, as you type), the
 * `Filters` button opening the filter builder, `Group by`, and `Show archived` for archivable
 * models. `Export` (every record the list matches) and `Import` open their dialogs; `Default
 * order` leaves a column sort on lists whose rows can be dragged. It wraps onto several lines on
 * a narrow screen.
 */
import { html } from '../../../lib/html.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useUniqueId } from './unique-id.js';

/** Typing pauses this long before the list searches. */
const SEARCH_DELAY_MS = 300;

/**
 * @param {{
 *   title: string, canCreate: boolean, onNew: () => void,
 *   search: string, onSearch: (text: string) => void,
 *   filtersOpen: boolean, filterCount: number, onToggleFilters: () => void,
 *   groupFields: {name: string, label: string}[], group: string | null, onGroup: (name: string | null) => void,
 *   archivable: boolean, archived: boolean, onArchived: (on: boolean) => void,
 *   pager: unknown, filtersPanelId: string,
 *   onExport?: (() => void) | null, onImport?: (() => void) | null, onDefaultOrder?: (() => void) | null,
 * }} props
 */
export function ListToolbar(props) {
  const id = useUniqueId('ff-list-toolbar');
  const [text, setText] = useState(props.search);
  const timer = useRef(/** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined));
  const committed = useRef(props.search);

  // The route changed the search (back button, a link): the box shows it.
  useEffect(() => {
    if (props.search !== committed.current) {
      committed.current = props.search;
      setText(props.search);
    }
  }, [props.search]);
  useEffect(() => () => clearTimeout(timer.current), []);

  /** @param {string} value */
  const commit = (value) => {
    clearTimeout(timer.current);
    if (value === committed.current) return;
    committed.current = value;
    props.onSearch(value);
  };

  return html`<div class="ff-list-toolbar">
    <div class="ff-list-toolbar-top">
      <h1 class="ff-list-title ff-visually-hidden">${props.title}</h1>
      ${props.canCreate ? html`<button type="button" class="ff-button ff-button-primary" onClick=${props.onNew}>New</button>` : null}
      ${props.onImport ? html`<button type="button" class="ff-button" onClick=${props.onImport}>Import</button>` : null}
      ${props.onExport ? html`<button type="button" class="ff-button" onClick=${props.onExport}>Export</button>` : null}
      <div class="ff-list-toolbar-pager">${props.pager}</div>
    </div>
    <div class="ff-list-toolbar-controls" role="search">
      <label class="ff-visually-hidden" for=${`${id}-search`}>Search</label>
      <input
        id=${`${id}-search`}
        type="search"
        class="ff-input ff-list-search"
        placeholder=${`Search ${props.title}…`}
        autocomplete="off"
        value=${text}
        onInput=${(/** @type {InputEvent} */ e) => {
          const value = /** @type {HTMLInputElement} */ (e.currentTarget).value;
          setText(value);
          clearTimeout(timer.current);
          timer.current = setTimeout(() => commit(value), SEARCH_DELAY_MS);
        }}
        onKeyDown=${(/** @type {KeyboardEvent} */ e) => {
          if (e.key === 'Enter') commit(/** @type {HTMLInputElement} */ (e.currentTarget).value);
        }}
      />
      <button
        type="button"
        class="ff-button"
        aria-expanded=${props.filtersOpen ? 'true' : 'false'}
        id=${`${props.filtersPanelId}-button`}
        aria-controls=${props.filtersPanelId}
        onClick=${props.onToggleFilters}
      >Filters${props.filterCount ? html` <span class="ff-badge">${props.filterCount}</span>` : null}</button>
      ${props.groupFields.length
        ? html`<span class="ff-list-group-by">
            <label class="ff-label" for=${`${id}-group`}>Group by</label>
            <select
              id=${`${id}-group`}
              class="ff-input"
              value=${props.group ?? ''}
              onChange=${(/** @type {Event} */ e) => props.onGroup(/** @type {HTMLSelectElement} */ (e.currentTarget).value || null)}
            >
              <option value="">None</option>
              ${props.groupFields.map((f) => html`<option key=${f.name} value=${f.name}>${f.label}</option>`)}
            </select>
          </span>`
        : null}
      ${props.onDefaultOrder ? html`<button type="button" class="ff-button" onClick=${props.onDefaultOrder}>Default order</button>` : null}
      ${props.archivable
        ? html`<label class="ff-list-archived-toggle">
            <input type="checkbox" checked=${props.archived} onChange=${(/** @type {Event} */ e) => props.onArchived(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} />
            Show archived
          </label>`
        : null}
    </div>
  </div>`;
}
