/**
 * Reordering a list's rows on models with a `sequence` field (spec §4.9, CONTRACTS C3): a row
 * dropped after another calls `resequence`, which renumbers the model's rows 1..N in its default
 * order with the row at its new place, and answers the ids in that order; the page is reordered
 * from that answer (and each row's `sequence` set to its new number), with no reload.
 *
 * Rows can be dragged only when the list shows the model's own order (sequence first) and is not
 * grouped: dragging rows sorted by a name would not say where the row goes in the sequence.
 */
import { api } from '../../api.js';
import { PAGE_SIZE, searchTerms, stateFilter } from './list-query.js';

/**
 * @typedef {import('./list-route.js').ListState} ListState
 * @typedef {import('./list-columns.js').Registry} Registry
 * @typedef {import('./list-row.js').ListRecord} ListRecord
 * @typedef {{enabled: boolean, reason: string | null}} Reorderability
 */

export const SEQUENCE_FIELD = 'sequence';

/** Whether the model's default order starts with its sequence. @param {string[]} defaultOrder */
function sequenceFirst(defaultOrder) {
  return /^\s*sequence(\s+ASC)?\s*$/i.test(defaultOrder[0] ?? '');
}

/**
 * Whether rows may be dragged, and why not when they may not (shown on the disabled handles);
 * null when the model has nothing to reorder (no handles at all).
 * @param {{registry: Registry, defaultOrder: string[], state: ListState, grouped: boolean, canWrite: boolean}} input
 * @returns {Reorderability | null}
 */
export function reorderability({ registry, defaultOrder, state, grouped, canWrite }) {
  const field = registry[SEQUENCE_FIELD];
  if (!field || field.type !== 'Integer' || !canWrite || grouped || !sequenceFirst(defaultOrder)) return null;
  if (state.order && !/^sequence ASC$/i.test(state.order)) {
    const [name] = state.order.split(' ');
    return { enabled: false, reason: `Sorted by ${registry[name]?.label ?? name}: choose Default order to drag rows.` };
  }
  return { enabled: true, reason: null };
}

/**
 * The record a row dropped at the top of page `page` goes after: the last one of the page before
 * (one record read), or none on the first page.
 * @param {{model: string, state: ListState, registry: Registry, archivable: boolean, defaultOrder: string[]}} input
 * @returns {Promise<number | null>}
 */
async function lastOfPreviousPage({ model, state, registry, archivable, defaultOrder }) {
  if (state.page <= 1) return null;
  /** @type {Record<string, unknown>} */
  const body = { fields: ['id'], limit: 1, page: (state.page - 1) * PAGE_SIZE, order_by: state.order ? [state.order] : defaultOrder };
  const filter = stateFilter(state, registry, archivable);
  if (filter) body.filter_str = filter;
  const terms = searchTerms(state.search);
  if (terms.length) body.name_search = terms;
  const rows = /** @type {{id: number}[]} */ (await api.query(model, body));
  return rows[0]?.id ?? null;
}

/**
 * Moves a record of the page to position `to` (0-based, on this page) through `resequence`, and
 * answers the page's records in their new order.
 * @param {{model: string, records: ListRecord[], id: number, to: number, state: ListState, registry: Registry, archivable: boolean, defaultOrder: string[]}} input
 * @returns {Promise<ListRecord[] | null>} null when nothing moved
 */
export async function moveRecord({ model, records, id, to, state, registry, archivable, defaultOrder }) {
  const from = records.findIndex((r) => r.id === id);
  if (from < 0 || to === from || to < 0 || to >= records.length) return null;
  const others = records.filter((r) => r.id !== id);
  const after = to === 0 ? await lastOfPreviousPage({ model, state, registry, archivable, defaultOrder }) : others[to - 1].id;
  const answer = /** @type {{ids: number[]}} */ (
    await api.post(`/api/resequence/${encodeURIComponent(model)}`, { dropped_column_id: id, after_column_id: after, sequence_field: SEQUENCE_FIELD })
  );
  const position = new Map((answer?.ids ?? []).map((x, i) => [x, i]));
  const moved = records[from];
  const placed = [...others.slice(0, to), moved, ...others.slice(to)];
  // The server's order wins; rows it did not name (none, unless the answer is partial) keep the place the drop gave them.
  const ordered = placed.every((r) => position.has(r.id))
    ? [...placed].sort((a, b) => /** @type {number} */ (position.get(a.id)) - /** @type {number} */ (position.get(b.id)))
    : placed;
  return ordered.map((r) => (SEQUENCE_FIELD in r && position.has(r.id) ? { ...r, [SEQUENCE_FIELD]: /** @type {number} */ (position.get(r.id)) + 1 } : r));
}
