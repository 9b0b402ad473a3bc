/**
 * Where the page lies among all matches (`81–160 / 250`), with the previous and next pages. In a
 * grouped list it pages the groups and counts the records.
 */
import { html } from '../../../lib/html.js';
import { formatNumber } from '../../format.js';

/**
 * @param {{page: number, pageSize: number, shown: number, total: number | null, grouped: boolean, hasNext: boolean, lang: string, onPage: (page: number) => void}} props
 */
export function ListPager({ page, pageSize, shown, total, grouped, hasNext, lang, onPage }) {
  const n = (/** @type {number} */ value) => formatNumber(value, { digits: 0, lang });
  const first = (page - 1) * pageSize + 1;
  const last = (page - 1) * pageSize + shown;
  let text;
  if (grouped) text = total === null ? '' : `${n(total)} ${total === 1 ? 'record' : 'records'}`;
  else if (total === null) text = '';
  else text = shown ? `${n(first)}–${n(last)} / ${n(total)}` : `0 / ${n(total)}`;
  return html`<nav class="ff-list-pager" aria-label="Pages">
    <span class="ff-list-pager-range" role="status" aria-live="polite">${text}</span>
    <button type="button" class="ff-icon-button" aria-label="Previous page" title="Previous page" disabled=${page <= 1} onClick=${() => onPage(page - 1)}>‹</button>
    <button type="button" class="ff-icon-button" aria-label="Next page" title="Next page" disabled=${!hasNext} onClick=${() => onPage(page + 1)}>›</button>
  </nav>`;
}
