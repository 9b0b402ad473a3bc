/**
 * The signed-in person, for the shell (`GET /auth/me`), and the session's two ends: renewing an
 * expired access cookie with the refresh cookie (which only `/auth` sees), and signing out.
 * A session that cannot be renewed sends the browser to the sign-in page, which brings it back here.
 */
import { api, ApiError, setUnauthorizedHandler } from '../api.js';
import { confirmLeave, setLeaveGuard } from '../leave-guard.js';
import { stopRealtime } from '../realtime/socket.js';

/**
 * @typedef {object} SessionUser
 * @property {number} id
 * @property {string} name
 * @property {string | null} email
 * @property {string | null} lang the user's own preference
 * @property {boolean} is_admin
 * @property {string[]} groups qualified identifiers (`core.group_user`)
 * @property {{id: number, name: string} | null} company
 * @property {boolean} totp_enabled
 * @property {{code: string, direction: string}} language what the user gets
 * @property {string} db
 */

/** @typedef {{user: SessionUser, db: string, lang: string}} Session */

export function signInUrl() {
  const next = location.pathname + location.search + location.hash;
  return `/web/login?next=${encodeURIComponent(next)}`;
}

let leaving = false;

/**
 * Leaves for the sign-in page, once: a refused request and the socket's 4001 often say so
 * together, and a second `location.assign` would abort the first navigation.
 */
export function goToSignIn() {
  if (leaving) return;
  leaving = true;
  location.assign(signInUrl());
}

/** Renews the access cookie from the refresh cookie; true when it worked. */
export async function renewSession() {
  try {
    await api.post('/auth/refresh', {}, { quiet401: true });
    return true;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 400)) return false;
    throw err;
  }
}

/**
 * The session, renewed once if the access cookie has expired; null when signed out.
 * @returns {Promise<Session | null>}
 */
export async function loadSession() {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const user = /** @type {SessionUser} */ (await api.get('/auth/me', { quiet401: true }));
      return { user, db: user.db, lang: user.language.code };
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401 || attempt > 0) throw err;
      if (!(await renewSession())) return null;
    }
  }
  return null;
}

/**
 * A request refused as signed out during work: renew the session once (the next try works), else
 * sign in again and come back.
 */
export function handleExpiredSessions() {
  let renewing = /** @type {Promise<boolean> | null} */ (null);
  setUnauthorizedHandler(() => {
    renewing ??= renewSession().catch(() => false).finally(() => setTimeout(() => { renewing = null; }, 10_000));
    void renewing.then((renewed) => {
      if (renewed) window.fieldforge?.toast.show({ type: 'info', message: 'Your session was renewed. Try that again.' });
      else goToSignIn();
    });
  });
}

/** Signs out (after the unsaved-edits question) and goes to the sign-in page. */
export async function signOut() {
  if (!(await confirmLeave())) return;
  setLeaveGuard(null);
  // The socket closes first: the server's 4001 for this sign-out is no news to this tab.
  stopRealtime();
  try {
    await api.post('/auth/logout', {}, { quiet401: true });
  } catch (err) {
    // Already signed out (401) is what was wanted; anything else, say so and stay.
    if (!(err instanceof ApiError) || err.status !== 401) {
      window.fieldforge?.toast.show({ type: 'error', message: err instanceof Error ? err.message : String(err) });
      return;
    }
  }
  location.assign('/web/login');
}
