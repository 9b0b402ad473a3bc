/**
 * What a list shows, kept in the URL's hash so a reload, a shared link or the back button
 * reopens the same page: `page`, `order` (`name DESC`), `search` (the search box's text), `group`
 * (a field), `archived` (`1`) and `filter` (the field filters as JSON). Only what differs from
 * the default is written.
 */

/**
 * @typedef {import('./field-filters.js').FieldFilter} FieldFilter
 * @typedef {object} ListState
 * @property {number} page 1-based
 * @property {string | null} order one ordering entry (`name ASC`), null for the model's default
 * @property {string} search the search box's text
 * @property {string | null} group field name
 * @property {boolean} archived archived records shown too
 * @property {FieldFilter[]} filters
 */

const KEYS = ['page', 'order', 'search', 'group', 'archived', 'filter'];
const ORDER = /^[A-Za-z_][A-Za-z0-9_]* (ASC|DESC)$/;

/**
 * @param {Record<string, string | undefined>} route the hash's parameters
 * @returns {ListState}
 */
export function parseListRoute(route) {
  const page = Number(route.page);
  return {
    page: Number.isInteger(page) && page >= 1 ? page : 1,
    order: route.order && ORDER.test(route.order) ? route.order : null,
    search: route.search ?? '',
    group: route.group && /^[A-Za-z_][A-Za-z0-9_]*$/.test(route.group) ? route.group : null,
    archived: route.archived === '1',
    filters: parseFilters(route.filter),
  };
}

/** @param {string | undefined} text @returns {FieldFilter[]} */
function parseFilters(text) {
  if (!text) return [];
  try {
    const parsed = JSON.parse(text);
    if (!Array.isArray(parsed)) return [];
    return parsed
      .filter((f) => f && typeof f.field === 'string' && typeof f.op === 'string')
      .map((f) => ({ field: f.field, op: f.op, ...(f.value !== undefined ? { value: f.value } : {}) }));
  } catch {
    return [];
  }
}

/**
 * The hash parameters of a state: every list key, empty (`''`) when at its default, so a shell
 * that merges parameters clears them and one that replaces them drops nothing else.
 * @param {ListState} state
 * @returns {Record<string, string>}
 */
export function listRouteParams(state) {
  return {
    page: state.page > 1 ? String(state.page) : '',
    order: state.order ?? '',
    search: state.search,
    group: state.group ?? '',
    archived: state.archived ? '1' : '',
    filter: state.filters.length ? JSON.stringify(state.filters) : '',
  };
}

/**
 * A stable key of what a state queries (equal keys, same records).
 * @param {ListState} state
 */
export function stateKey(state) {
  return JSON.stringify([state.page, state.order, state.search.trim(), state.group, state.archived, state.filters]);
}

/**
 * The list keys of a route, for telling whether a new route changes the list.
 * @param {Record<string, string | undefined>} route
 */
export function routeKey(route) {
  return stateKey(parseListRoute(route));
}

export { KEYS as LIST_ROUTE_KEYS };
