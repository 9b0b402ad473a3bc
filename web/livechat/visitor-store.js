/**
 * Where the widget keeps its session: `localStorage` of the page's own site (never a cookie, so no
 * third-party cookie is needed, and two sites in one browser never share a conversation), under a
 * key naming our server and database, so two widgets on one page keep theirs apart. A browser
 * that refuses storage (a private mode, a blocked site) keeps the session for the page's lifetime.
 */

/** @typedef {{token: string, session_id: number, name: string}} StoredSession */

/** @type {Map<string, string>} */
const memory = new Map();

/** @param {string} server @param {string} db */
const keyOf = (server, db) => `fieldforge-livechat:${server}/${db}`;

/** @param {string} server @param {string} db @returns {StoredSession | null} */
export function loadSession(server, db) {
  let text = memory.get(keyOf(server, db)) ?? null;
  try {
    text = localStorage.getItem(keyOf(server, db)) ?? text;
  } catch { /* storage refused: the page-lifetime copy */ }
  if (!text) return null;
  try {
    const value = JSON.parse(text);
    if (typeof value?.token === 'string' && Number.isSafeInteger(value.session_id)) {
      return { token: value.token, session_id: value.session_id, name: typeof value.name === 'string' ? value.name : '' };
    }
  } catch { /* not ours, or damaged: start afresh */ }
  return null;
}

/** @param {string} server @param {string} db @param {StoredSession | null} session */
export function saveSession(server, db, session) {
  const key = keyOf(server, db);
  if (session) memory.set(key, JSON.stringify(session));
  else memory.delete(key);
  try {
    if (session) localStorage.setItem(key, JSON.stringify(session));
    else localStorage.removeItem(key);
  } catch { /* storage refused or full: the page-lifetime copy */ }
}
