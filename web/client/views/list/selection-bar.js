/**
 * What the ticked rows can do: how many are ticked, "Select all N" when the whole page is ticked
 * but more records match, and the actions (Delete, Duplicate, Archive, the model's wizards and
 * reports) as buttons named by their text.
 */
import { html } from '../../../lib/html.js';
import { formatNumber } from '../../format.js';

/**
 * @typedef {{label: string, run: () => void, danger?: boolean}} SelectionAction
 */

/**
 * @param {{
 *   count: number, total: number | null, allMatching: boolean, pageAllSelected: boolean,
 *   onSelectAll: () => void, onClear: () => void, actions: SelectionAction[], busy: boolean, lang: string,
 * }} props
 */
export function SelectionBar({ count, total, allMatching, pageAllSelected, onSelectAll, onClear, actions, busy, lang }) {
  const n = (/** @type {number} */ value) => formatNumber(value, { digits: 0, lang });
  const offerAll = !allMatching && pageAllSelected && total !== null && total > count;
  return html`<div class="ff-list-selection" role="region" aria-label="Selection" aria-busy=${busy ? 'true' : 'false'}>
    <span class="ff-list-selection-count" role="status">${allMatching ? `All ${n(count)} selected` : `${n(count)} selected`}</span>
    ${offerAll ? html`<button type="button" class="ff-button ff-list-select-all" onClick=${onSelectAll}>Select all ${n(/** @type {number} */ (total))}</button>` : null}
    <button type="button" class="ff-button" onClick=${onClear}>Clear selection</button>
    <span class="ff-list-selection-actions">
      ${actions.map(
        (a) => html`<button key=${a.label} type="button" class=${`ff-button${a.danger ? ' ff-button-danger' : ''}`} disabled=${busy} onClick=${a.run}>${a.label}</button>`,
      )}
    </span>
  </div>`;
}
