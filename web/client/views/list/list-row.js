/**
 * One record's row: a labelled checkbox, then a cell per column. The row itself takes focus (one
 * row of the table is in the tab order at a time, arrows move between rows): Enter opens the
 * record, Space ticks it. A click anywhere but the checkbox opens the record.
 *
 * On lists that can be reordered (`row-reorder.js`) a drag handle precedes the checkbox, and
 * Alt+ArrowUp / Alt+ArrowDown move the focused row one place (the keyboard's way to drag).
 */
import { html } from '../../../lib/html.js';
import { cellContent } from './list-cell.js';

/**
 * @typedef {import('./list-columns.js').Column} Column
 * @typedef {{id: number, display_name?: string | null, active?: boolean} & Record<string, unknown>} ListRecord
 * @typedef {{enabled: boolean, reason: string | null, handleProps: Record<string, (event: PointerEvent) => void>,
 *   drop: 'before' | 'after' | null, dragging: boolean, onMoveBy: (id: number, step: -1 | 1) => void}} RowReorder
 */

/**
 * @param {{
 *   record: ListRecord, columns: Column[], lang: string, selected: boolean, focusable: boolean,
 *   onToggle: (id: number, event: MouseEvent | KeyboardEvent) => void, onOpen: (id: number) => void,
 *   onFocusRow: (id: number) => void, reorder?: RowReorder | null,
 * }} props
 */
export function ListRow({ record, columns, lang, selected, focusable, onToggle, onOpen, onFocusRow, reorder = null }) {
  const name = record.display_name || `#${record.id}`;
  const archived = record.active === false;
  /** @param {MouseEvent} event */
  const click = (event) => {
    const target = /** @type {HTMLElement} */ (event.target);
    if (target.closest('.ff-list-select')) return;
    if (window.getSelection()?.toString()) return; // selecting text to copy is not opening
    onOpen(record.id);
  };
  /** @param {KeyboardEvent} event */
  const key = (event) => {
    if (reorder && event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
      event.preventDefault();
      if (reorder.enabled) reorder.onMoveBy(record.id, event.key === 'ArrowUp' ? -1 : 1);
      return;
    }
    if (event.target !== event.currentTarget) return;
    if (event.key === 'Enter') {
      event.preventDefault();
      onOpen(record.id);
    } else if (event.key === ' ') {
      event.preventDefault();
      onToggle(record.id, event);
    }
  };
  const drop = reorder?.drop ? ` ff-list-drop-${reorder.drop}` : '';
  return html`<tr
    class=${`ff-list-row${selected ? ' ff-list-row-selected' : ''}${archived ? ' ff-list-row-archived' : ''}${drop}${reorder?.dragging ? ' ff-list-row-dragging' : ''}`}
    data-id=${record.id}
    tabindex=${focusable ? 0 : -1}
    aria-selected=${selected ? 'true' : 'false'}
    aria-keyshortcuts=${reorder?.enabled ? 'Alt+ArrowUp Alt+ArrowDown' : undefined}
    onClick=${click}
    onKeyDown=${key}
    onFocus=${() => onFocusRow(record.id)}
  >
    <td class=${`ff-list-select${reorder ? ' ff-list-select-handle' : ''}`}>
      ${reorder
        ? html`<button type="button" tabindex="-1" class="ff-list-handle" aria-label=${`Move ${name}`}
            aria-keyshortcuts="Alt+ArrowUp Alt+ArrowDown" aria-disabled=${reorder.enabled ? undefined : 'true'}
            title=${reorder.reason ?? 'Drag to reorder (or Alt+Arrow up/down on the row)'}
            ...${reorder.enabled ? reorder.handleProps : {}}><span aria-hidden="true">⠿</span></button>`
        : null}
      <input
        type="checkbox"
        tabindex="-1"
        checked=${selected}
        aria-label=${`Select ${name}`}
        onClick=${(/** @type {MouseEvent} */ event) => onToggle(record.id, event)}
      />
    </td>
    ${columns.map(
      (column, index) => html`<td key=${column.name} class=${column.numeric ? 'ff-list-number' : undefined}>
        ${cellContent(column, record, lang)}
        ${index === 0 && archived ? html` <span class="ff-badge ff-list-archived-badge">Archived</span>` : null}
      </td>`,
    )}
  </tr>`;
}
