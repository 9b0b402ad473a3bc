/**
 * The shell's address: the view lives in the hash (`/web#action=contacts.action_contacts&view=form&id=7`,
 * CONTRACTS C2), so a reload reopens it, it can be shared, and the browser's Back goes to the
 * previous view. `navigate` pushes a history entry (or replaces the current one); every change is
 * announced to the shell, which re-renders from `readRoute()`.
 */

/** @typedef {Record<string, string>} Route */

/** The hash's parameters (strings). @returns {Route} */
export function readRoute() {
  /** @type {Route} */
  const route = {};
  for (const [key, value] of new URLSearchParams(location.hash.replace(/^#/, ''))) route[key] = value;
  // A record's shared address names no view (`#action=…&id=5`, CONTRACTS C5 precision 10): its form.
  if (route.id && !route.view) route.view = 'form';
  return route;
}

/** `#action=…&view=…` for `params`; empty, null and undefined values are left out. @param {Record<string, unknown>} params */
export function formatRoute(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `#${text}` : '';
}

/** @typedef {(change: {external: boolean}) => void} RouteListener */

/** @type {Set<RouteListener>} */
const listeners = new Set();
/** The hash last announced: Back fires both `popstate` and `hashchange`, announced once. */
let announced = location.hash;

/**
 * Calls `listener` after each change of the address; `external` when the browser made it (Back,
 * Forward, a typed or linked hash) rather than `writeRoute`.
 * @param {RouteListener} listener @returns {() => void} unsubscribe
 */
export function onRouteChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** @param {boolean} external */
function announce(external) {
  if (location.hash === announced) return;
  announced = location.hash;
  for (const listener of listeners) listener({ external });
}

/**
 * Sets the address to `params`. A push adds a history entry (Back returns here); a replace does
 * not (a list's page or sort, a record just created getting its id).
 * @param {Record<string, unknown>} params @param {{replace?: boolean}} [options]
 */
export function writeRoute(params, options = {}) {
  const hash = formatRoute(params);
  const url = `${location.pathname}${location.search}${hash}`;
  if (url === `${location.pathname}${location.search}${location.hash}`) return;
  if (options.replace) history.replaceState(history.state, '', url);
  else history.pushState(null, '', url);
  announce(false);
}

// Back, Forward, a link with a hash, or a hash typed in the address bar.
window.addEventListener('popstate', () => announce(true));
window.addEventListener('hashchange', () => announce(true));

/**
 * Puts back the address of the view still shown (the person chose to stay on unsaved edits after
 * Back): a new entry, so the page and the address agree again.
 * @param {string} hash
 */
export function restoreRoute(hash) {
  history.pushState(null, '', `${location.pathname}${location.search}${hash}`);
  announced = location.hash;
}
