/**
 * The list's table: sortable column headers (`aria-sort`), one row per record, group rows that
 * open and close with their count and sums, and a footer of sums over every matching record.
 * Arrow keys move between rows (one row is in the tab order), Home/End jump to the ends. On
 * reorderable lists each row has a drag handle (`row-drag.js`) and Alt+arrows move it.
 */
import { html } from '../../../lib/html.js';
import { useEffect, useRef, useState } from 'preact/hooks';
import { formatMonetary, formatNumber } from '../../format.js';
import { ListRow } from './list-row.js';
import { useRowDrag } from './row-drag.js';

/**
 * @typedef {import('./list-columns.js').Column} Column
 * @typedef {import('./list-row.js').ListRecord} ListRecord
 * @typedef {object} GroupView
 * @property {string} key
 * @property {string} label the group's value as text ('None' for no value)
 * @property {number} count
 * @property {Record<string, number | null>} aggregates
 * @property {Record<string, import('./footer-currencies.js').CurrencySum[]>} [currencySums] the amounts' sums by currency
 * @property {boolean} expanded
 * @property {ListRecord[]} records the loaded records (when expanded)
 * @property {boolean} loading
 * @property {string | null} error
 * @property {boolean} hasMore more records than loaded
 */

/**
 * A sum as its column shows it. An amount's sums by currency (`footer-currencies.js`), when known:
 * one currency → the sum with its symbol; several → one sum per currency, never their mixed total.
 * @param {Column} column @param {number | null | undefined} value @param {string} lang
 * @param {import('./footer-currencies.js').CurrencySum[]} [byCurrency]
 * @returns {string | string[]}
 */
export function formatSum(column, value, lang, byCurrency) {
  if (value === null || value === undefined) return '';
  if (column.field.type === 'Integer') return formatNumber(value, { digits: 0, lang });
  if (column.field.type === 'Monetary' && byCurrency?.length) {
    if (byCurrency.length === 1) return formatMonetary(value, byCurrency[0].currency, lang);
    return byCurrency.map((s) => formatMonetary(s.sum, s.currency, lang));
  }
  // Amounts whose currencies are not known (too many groups to ask): the figure alone.
  if (column.field.type === 'Monetary') return formatMonetary(value, null, lang);
  return formatNumber(value, { digits: column.field.precision ?? 2, lang });
}

/**
 * @param {{
 *   columns: Column[], records: ListRecord[] | null, groups: GroupView[] | null, groupLabel: string | null,
 *   order: string | null, onSort: (column: Column) => void,
 *   isSelected: (id: number) => boolean, onToggle: (id: number, event: MouseEvent | KeyboardEvent) => void,
 *   pageState: 'all' | 'some' | 'none', onTogglePage: () => void,
 *   onOpen: (id: number) => void, lang: string, aggregates: Record<string, number | null> | null,
 *   currencySums?: Record<string, import('./footer-currencies.js').CurrencySum[]>,
 *   onToggleGroup: (key: string) => void, onMoreInGroup: (key: string) => void,
 *   empty: unknown, caption: string,
 *   reorder?: {enabled: boolean, reason: string | null, onMove: (id: number, to: number) => void} | null,
 * }} props
 */
export function ListTable(props) {
  const { columns, records, groups, order, onSort, isSelected, onToggle, pageState, onTogglePage, onOpen, lang, aggregates, caption } = props;
  const [activeId, setActiveId] = useState(/** @type {number | null} */ (null));
  const pageBox = useRef(/** @type {HTMLInputElement | null} */ (null));
  const reorder = records ? props.reorder ?? null : null;
  const { drag, handleProps } = useRowDrag((id, to) => reorder?.onMove(id, to));
  useEffect(() => {
    if (pageBox.current) pageBox.current.indeterminate = pageState === 'some';
  }, [pageState]);

  const visibleIds = records ? records.map((r) => r.id) : (groups ?? []).flatMap((g) => (g.expanded ? g.records.map((r) => r.id) : []));
  const focusId = activeId !== null && visibleIds.includes(activeId) ? activeId : visibleIds[0] ?? null;
  const [orderField, orderDir] = order ? order.split(' ') : [null, null];
  const firstSum = columns.findIndex((c) => c.summable);
  const hasSums = firstSum >= 0;
  // The label of a group or of the footer spans the columns before the first sum.
  const labelSpan = hasSums ? Math.max(firstSum, 1) : columns.length;

  /** @param {KeyboardEvent} event */
  const moveFocus = (event) => {
    if (event.altKey || !['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(event.key)) return;
    const row = /** @type {HTMLElement} */ (event.target).closest('tr[data-id]');
    if (!row || event.target !== row) return;
    const rows = /** @type {HTMLElement[]} */ ([...(row.closest('table')?.querySelectorAll('tr[data-id]') ?? [])]);
    const at = rows.indexOf(/** @type {HTMLElement} */ (row));
    const next = event.key === 'Home' ? 0 : event.key === 'End' ? rows.length - 1 : at + (event.key === 'ArrowDown' ? 1 : -1);
    if (next < 0 || next >= rows.length) return;
    event.preventDefault();
    rows[next].focus();
  };

  /** Where the drop line is drawn on the row at `index`, while a row is dragged. @param {number} index */
  const dropAt = (index) => {
    if (!drag || drag.over === drag.from || index !== drag.over) return null;
    return drag.over < drag.from ? 'before' : 'after';
  };

  /** @param {ListRecord} record @param {number} [index] */
  const row = (record, index = -1) => html`<${ListRow}
    key=${record.id}
    record=${record}
    columns=${columns}
    lang=${lang}
    selected=${isSelected(record.id)}
    focusable=${record.id === focusId}
    onToggle=${onToggle}
    onOpen=${onOpen}
    onFocusRow=${setActiveId}
    reorder=${reorder
      ? {
          enabled: reorder.enabled,
          reason: reorder.reason,
          handleProps: handleProps(record.id),
          drop: dropAt(index),
          dragging: drag?.id === record.id,
          onMoveBy: (/** @type {number} */ id, /** @type {-1 | 1} */ step) => reorder.onMove(id, index + step),
        }
      : null}
  />`;

  /** @param {Record<string, number | null>} sums @param {Record<string, import('./footer-currencies.js').CurrencySum[]>} [byCurrency] */
  const sumCells = (sums, byCurrency = {}) =>
    columns.slice(labelSpan).map((c) => {
      const text = c.summable ? formatSum(c, sums[c.name], lang, byCurrency[c.name]) : '';
      return html`<td key=${c.name} class="ff-list-number ff-list-sum">${Array.isArray(text)
        ? html`<ul class="ff-list-sum-currencies">${text.map((t) => html`<li>${t}</li>`)}</ul>` : text}</td>`;
    });

  /** A group is a row group of its own: its header row names it for the rows below. @param {GroupView} group */
  const groupBody = (group) => html`<tbody key=${group.key} onKeyDown=${moveFocus}>
    <tr class="ff-list-group">
      <td class="ff-list-select"></td>
      <th scope="rowgroup" colspan=${labelSpan} class="ff-list-group-label">
        <button type="button" class="ff-list-group-toggle" aria-expanded=${group.expanded ? 'true' : 'false'} onClick=${() => props.onToggleGroup(group.key)}>
          <span class="ff-list-group-caret" aria-hidden="true">${group.expanded ? '▾' : '▸'}</span>
          <span>${group.label}</span>
          <span class="ff-list-group-count">(${formatNumber(group.count, { digits: 0, lang })})</span>
        </button>
      </th>
      ${hasSums ? sumCells(group.aggregates, group.currencySums) : null}
    </tr>
    ${group.expanded ? group.records.map(row) : null}
    ${group.expanded && (group.loading || group.error || group.hasMore)
      ? html`<tr class="ff-list-group-more">
          <td class="ff-list-select"></td>
          <td colspan=${columns.length}>
            ${group.loading
              ? html`<span role="status">Loading…</span>`
              : group.error
                ? html`<span role="alert" class="ff-error-text">${group.error}</span>`
                : html`<button type="button" class="ff-button" onClick=${() => props.onMoreInGroup(group.key)}>Load more (${formatNumber(group.count - group.records.length, { digits: 0, lang })})</button>`}
          </td>
        </tr>`
      : null}
  </tbody>`;

  const nothing = (records && !records.length) || (groups && !groups.length);

  return html`<table class="ff-table ff-list-table">
    <caption class="ff-visually-hidden">${caption}</caption>
    <thead>
      <tr>
        <th scope="col" class=${`ff-list-select${reorder ? ' ff-list-select-handle' : ''}`}>
          <input ref=${pageBox} type="checkbox" aria-label="Select all records on this page" checked=${pageState === 'all'} disabled=${!visibleIds.length} onClick=${onTogglePage} />
        </th>
        ${columns.map((c) => {
          const sorted = orderField === c.name ? (orderDir === 'DESC' ? 'descending' : 'ascending') : undefined;
          const cls = c.numeric ? 'ff-list-number' : undefined;
          if (!c.sortable) return html`<th key=${c.name} scope="col" class=${cls}>${c.label}</th>`;
          return html`<th key=${c.name} scope="col" class=${cls} aria-sort=${sorted}>
            <button type="button" class="ff-list-sort" onClick=${() => onSort(c)}>
              ${c.label}<span class="ff-list-sort-mark" aria-hidden="true">${sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : ''}</span>
            </button>
          </th>`;
        })}
      </tr>
    </thead>
    ${nothing
      ? html`<tbody><tr class="ff-list-empty"><td colspan=${columns.length + 1}>${props.empty}</td></tr></tbody>`
      : records
        ? html`<tbody onKeyDown=${moveFocus}>${records.map((record, index) => row(record, index))}</tbody>`
        : (groups ?? []).map(groupBody)}
    ${hasSums && aggregates && !nothing
      ? html`<tfoot>
          <tr class="ff-list-total">
            <td class="ff-list-select"></td>
            <th scope="row" colspan=${labelSpan}>Total</th>
            ${sumCells(aggregates, props.currencySums)}
          </tr>
        </tfoot>`
      : null}
  </table>`;
}
