/**
 * What a list shows — page, order, search, filters, grouping, archived — kept in the address
 * (`list-route.js`), so a reload or a shared link reopens it. `update` changes it and writes the
 * address (replacing the entry); anything but the page starts again at page 1, and is a new
 * query (`onNewQuery`: nothing ticked, no group opened). A route this view did not write (Back, a
 * link, another tab's address) replaces the state the same way; the last routes it wrote are no
 * news when they come back.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { listRouteParams, parseListRoute, routeKey, stateKey } from './list-route.js';

/** @typedef {import('./list-route.js').ListState} ListState */

/** Keys of the routes this view navigated to itself: their arrival is no news. */
const REMEMBERED_ROUTES = 20;

/**
 * @param {{
 *   route: Record<string, string | undefined>, actionRef: string,
 *   navigate: (params: Record<string, string>, options?: {replace?: boolean}) => unknown, onNewQuery: () => void,
 * }} options
 */
export function useListState({ route, actionRef, navigate, onNewQuery }) {
  const [state, setState] = useState(() => parseListRoute(route));
  const sentRoutes = useRef(/** @type {string[]} */ ([]));

  const incoming = routeKey(route);
  useEffect(() => {
    if (incoming === stateKey(state) || sentRoutes.current.includes(incoming)) return;
    setState(parseListRoute(route));
    onNewQuery();
  }, [incoming]);

  /** @param {Partial<ListState>} patch */
  const update = (patch) => {
    const next = { ...state, page: 1, ...patch };
    setState(next);
    if (!('page' in patch)) onNewQuery();
    const key = stateKey(next);
    sentRoutes.current = [...sentRoutes.current.filter((k) => k !== key), key].slice(-REMEMBERED_ROUTES);
    navigate({ action: actionRef, view: 'list', ...listRouteParams(next) }, { replace: true });
  };

  return { state, update };
}
