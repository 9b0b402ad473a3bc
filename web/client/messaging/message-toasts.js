/**
 * A toast for each new message addressed to this person (CONTRACTS C5): an `activity_update` of
 * kind `message` shows its `title` (the author's display name) and `body` (the text's first 140
 * characters) as an `info` toast (`role="status"`), text only. A message re-pushed to the same
 * tab is shown once.
 */
import { onActivity } from '../realtime/socket.js';

const SEEN_LIMIT = 200;

/** Starts the toasts; answers the unsubscribe function. */
export function showMessageToasts() {
  /** @type {Set<number>} */
  const seen = new Set();
  return onActivity('message', (data) => {
    const id = Number(data.message_id);
    if (Number.isSafeInteger(id)) {
      if (seen.has(id)) return;
      seen.add(id);
      if (seen.size > SEEN_LIMIT) seen.delete(/** @type {number} */ (seen.values().next().value));
    }
    const title = typeof data.title === 'string' && data.title ? data.title : 'New message';
    window.fieldforge?.toast.show({ type: 'info', title, message: typeof data.body === 'string' ? data.body : '' });
  });
}
