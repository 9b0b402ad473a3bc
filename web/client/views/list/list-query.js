/**
 * The `/api/query` bodies of a list and the selection object its actions send (spec §4.2, §4.5,
 * CONTRACTS C1). The same filter text and search terms serve both, so "select all 250" names
 * exactly the records the list counts.
 */
import { filterExpression } from './field-filters.js';
import { qAnd, qCondition } from './q-expression.js';

/** Records per page, and per step inside an opened group: never more at once. */
export const PAGE_SIZE = 80;
/** Groups per page. */
export const GROUP_PAGE_SIZE = 80;

/**
 * @typedef {import('./list-route.js').ListState} ListState
 * @typedef {import('./list-columns.js').Column} Column
 * @typedef {import('./list-columns.js').Registry} Registry
 * @typedef {{ids: number[]} | {filter_str: string, name_search?: string[], exclude_ids?: number[]}} SelectionObject
 */

/**
 * The search box's text as name_search terms: each word must match (ANDed by the server).
 * @param {string} search
 */
export function searchTerms(search) {
  return search.split(/\s+/).filter(Boolean).slice(0, 20);
}

/**
 * The filter text of a state: the field filters, and every record whatever `active` says when
 * archived ones are shown.
 * @param {ListState} state @param {Registry} registry @param {boolean} archivable
 */
export function stateFilter(state, registry, archivable) {
  const parts = state.filters.map((f) => filterExpression(f, registry)).filter((p) => p !== null);
  // Naming `active` lifts the server's default of active records only.
  if (archivable && state.archived) parts.push(qCondition('active__in', [true, false]));
  return qAnd(/** @type {string[]} */ (parts));
}

/**
 * The body asking for one page of records (or, grouped, one page of groups).
 * @param {{state: ListState, registry: Registry, archivable: boolean, columns: Column[], fields: string[], defaultOrder: string[]}} input
 */
export function pageQuery({ state, registry, archivable, columns, fields, defaultOrder }) {
  const filter_str = stateFilter(state, registry, archivable);
  const terms = searchTerms(state.search);
  const sums = columns.filter((c) => c.summable).map((c) => c.name);
  /** @type {Record<string, unknown>} */
  const body = { limit: state.group ? GROUP_PAGE_SIZE : PAGE_SIZE, page: state.page, counter: true };
  if (filter_str) body.filter_str = filter_str;
  if (terms.length) body.name_search = terms;
  if (sums.length) body.footer_aggregates = sums;
  if (state.group) {
    body.group_fields = [state.group];
  } else {
    body.fields = fields;
    body.order_by = orderOf(state, defaultOrder);
  }
  return body;
}

/**
 * The body asking for one step of a group's records.
 * @param {{state: ListState, registry: Registry, archivable: boolean, fields: string[], defaultOrder: string[], groupFilter: string, page: number}} input
 */
export function groupRecordsQuery({ state, registry, archivable, fields, defaultOrder, groupFilter, page }) {
  const filter_str = qAnd([stateFilter(state, registry, archivable), groupFilter]);
  const terms = searchTerms(state.search);
  /** @type {Record<string, unknown>} */
  const body = { fields, filter_str, order_by: orderOf(state, defaultOrder), limit: PAGE_SIZE, page };
  if (terms.length) body.name_search = terms;
  return body;
}

/** The list's order: the column sorted, else the model's default. @param {ListState} state @param {string[]} defaultOrder */
export function orderOf(state, defaultOrder) {
  return state.order ? [state.order] : defaultOrder;
}

/**
 * The condition picking one group's records.
 * @param {string} field @param {unknown} value the group's value (`{id, display_name}` for a relation)
 */
export function groupCondition(field, value) {
  if (value === null || value === undefined) return qCondition(`${field}__isnull`, true);
  if (typeof value === 'object' && value && 'id' in value) return qCondition(field, /** @type {{id: number}} */ (value).id);
  return qCondition(field, value);
}

/**
 * The selection object of a list's selection: the ids picked, or every record the list matches
 * but the ones unticked since ("select all N").
 * @param {{allMatching: boolean, ids: number[], excluded: number[]}} selection
 * @param {{state: ListState, registry: Registry, archivable: boolean}} context
 * @returns {SelectionObject}
 */
export function selectionObject(selection, { state, registry, archivable }) {
  if (!selection.allMatching) return { ids: selection.ids };
  // `""` explicitly means every record the caller can see (an empty selection never does).
  /** @type {{filter_str: string, name_search?: string[], exclude_ids?: number[]}} */
  const object = { filter_str: stateFilter(state, registry, archivable) };
  const terms = searchTerms(state.search);
  if (terms.length) object.name_search = terms;
  if (selection.excluded.length) object.exclude_ids = selection.excluded;
  return object;
}

/**
 * The first default ordering entry as `<field> ASC|DESC` (the order a list shows on its column),
 * or null when it is not that simple.
 * @param {string[]} entries
 */
export function defaultOrderEntry(entries) {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)(?:\s+(ASC|DESC))?\s*$/i.exec(entries[0] ?? '');
  return m ? `${m[1]} ${(m[2] ?? 'ASC').toUpperCase()}` : null;
}
