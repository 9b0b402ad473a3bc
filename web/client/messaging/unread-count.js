/**
 * The bell's unread count (CONTRACTS C5 "Bell"), one per tab: seeded from `GET
 * /api/activity-stream/unread-count`, bumped at once by each `activity_update` of kind `message`
 * (a message seen twice — a re-pushed duplicate — counts once), and read again from the server
 * shortly after each bump, after each mark-as-read and on every socket (re)connect, so the badge
 * always ends on the server's count and never drifts. In a database without the messaging module
 * nothing is asked and the bell is not shown at all (were the list of modules unreadable, the
 * count's own 404 says the same).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import { installedModules } from '../module-assets.js';
import { onActivity, onRealtimeStatus } from '../realtime/socket.js';

/** How soon after a bump the server's count is read, to settle on the exact figure. */
export const SETTLE_MS = 1_500;
const SEEN_LIMIT = 500;

/** @typedef {{available: boolean | null, count: number}} UnreadState */

/** @type {UnreadState} */
let state = { available: null, count: 0 };
let readSeq = 0;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let settleTimer;
/** Message ids already counted by a frame (bounded). @type {Set<number>} */
const seen = new Set();
/** @type {Set<(state: UnreadState) => void>} */
const listeners = new Set();
let started = false;

/** @param {Partial<UnreadState>} next */
function set(next) {
  state = { ...state, ...next };
  for (const listener of [...listeners]) listener(state);
}

/**
 * Reads the server's count now; the latest read wins over earlier ones still under way.
 * @returns {Promise<number | null>} the count, or null when it could not be read
 */
export async function refreshUnreadCount() {
  const seq = ++readSeq;
  clearTimeout(settleTimer);
  try {
    const answer = /** @type {{count: number}} */ (await api.get('/api/activity-stream/unread-count', { quiet401: true }));
    if (seq !== readSeq) return state.count;
    const count = Number(answer?.count);
    set({ available: true, count: Number.isFinite(count) && count > 0 ? count : 0 });
    return state.count;
  } catch (err) {
    if (seq === readSeq && err instanceof ApiError && err.status === 404) set({ available: false, count: 0 });
    return null;
  }
}

/** Starts keeping the count (once): the first read, each reconnect, each `message` frame. */
export function followUnreadCount() {
  if (started) return;
  started = true;
  const installed = installedModules().then((modules) => !modules || modules.includes('messaging'));
  void installed.then((here) => {
    if (here) void refreshUnreadCount();
    else set({ available: false, count: 0 });
  });
  onRealtimeStatus((up) => {
    // A reconnect may have missed frames: the server's figure, not the sum of the ones seen.
    if (up) {
      void installed.then((here) => {
        if (here && state.available !== false) void refreshUnreadCount();
      });
    }
  });
  onActivity('message', (data) => {
    const id = Number(data.message_id);
    if (Number.isSafeInteger(id)) {
      if (seen.has(id)) return;
      seen.add(id);
      if (seen.size > SEEN_LIMIT) seen.delete(/** @type {number} */ (seen.values().next().value));
    }
    set({ available: true, count: state.count + 1 });
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => void refreshUnreadCount(), SETTLE_MS);
  });
}

/** @param {(state: UnreadState) => void} listener @returns {() => void} */
export function onUnreadCount(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The count as it changes. @returns {UnreadState} */
export function useUnreadCount() {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    setCurrent(state);
    return onUnreadCount(setCurrent);
  }, []);
  return current;
}
