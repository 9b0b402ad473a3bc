/**
 * A toast for each new message addressed to this person (CONTRACTS C5): an `activity_update` of
 * kind `message` shows its `title` (the author's display name) and `body` (the text's first 140
 * characters) as an `info` toast (`role="status"`), text only. A message re-pushed to the same
 * tab is shown once. Someone who chose `Only in the inbox` (precision 3) is not interrupted: the
 * badge still counts the message, no toast pops up.
 */
import { api } from '../api.js';
import { onActivity } from '../realtime/socket.js';
import { onUnreadCount } from './unread-count.js';

const SEEN_LIMIT = 200;

let inboxOnly = false;

/** The person's preference as saved (My profile tells it here at once). @param {string | null | undefined} preference */
export function setNotificationPreference(preference) {
  inboxOnly = preference === 'inbox';
}

/**
 * Starts the toasts for `userId`; answers the unsubscribe function. The preference is read once
 * the bell knows messaging is installed (no request for a field that does not exist).
 * @param {number} userId
 */
export function showMessageToasts(userId) {
  let asked = false;
  const offCount = onUnreadCount((state) => {
    if (asked || !state.available) return;
    asked = true;
    api.fetchRecord('User', userId, { fields: ['notification_preference'] }, { quiet401: true }).then(
      (row) => setNotificationPreference(/** @type {{notification_preference?: string}} */ (row).notification_preference),
      () => {}, // unknown: toasts stay on, as for `realtime`
    );
  });
  /** @type {Set<number>} */
  const seen = new Set();
  const offFrames = onActivity('message', (data) => {
    const id = Number(data.message_id);
    if (Number.isSafeInteger(id)) {
      if (seen.has(id)) return;
      seen.add(id);
      if (seen.size > SEEN_LIMIT) seen.delete(/** @type {number} */ (seen.values().next().value));
    }
    if (inboxOnly) return;
    const title = typeof data.title === 'string' && data.title ? data.title : 'New message';
    window.fieldforge?.toast.show({ type: 'info', title, message: typeof data.body === 'string' ? data.body : '' });
  });
  return () => {
    offCount();
    offFrames();
  };
}
