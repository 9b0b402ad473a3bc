/**
 * The activity stream's routes (spec §4.10, CONTRACTS C5) for the bell and the chatter: a page of
 * the caller's feed, newest first, and marking rows read in one of the three scopes. Every mark
 * reads the unread count again, so the badge shows the server's figure rather than a guess.
 */
import { api } from '../api.js';
import { refreshUnreadCount } from './unread-count.js';

export const FEED_PAGE = 30;

/**
 * @typedef {object} FeedItem
 * @property {number} message_id
 * @property {string} model
 * @property {number} document
 * @property {string | null} record_name
 * @property {{id: number, display_name: string} | null} author
 * @property {string | null} [author_name] who wrote it when that is no contact (a live-chat visitor)
 * @property {string} body
 * @property {string} content
 * @property {'comment' | 'note' | 'notification'} message_type
 * @property {string} created_date
 * @property {boolean} read
 */

/**
 * A page of the feed: the newest `limit` items, or those older than `beforeId`.
 * @param {{beforeId?: number, limit?: number, signal?: AbortSignal}} [options]
 * @returns {Promise<FeedItem[]>}
 */
export async function feedPage({ beforeId, limit = FEED_PAGE, signal } = {}) {
  const body = beforeId ? { limit, before_id: beforeId } : { limit };
  const answer = await api.post('/api/activity-stream', body, signal ? { signal } : {});
  return Array.isArray(answer) ? answer : [];
}

/**
 * Marks the caller's rows read: one message, all, or those of one record; then the badge reads
 * the server's count again.
 * @param {{message_id: number} | {all: true} | {model: string, document: number}} scope
 * @returns {Promise<number>} how many rows this call turned read
 */
export async function markRead(scope) {
  try {
    const answer = /** @type {{updated?: number}} */ (await api.post('/api/activity-stream/read', scope));
    return Number(answer?.updated) || 0;
  } finally {
    void refreshUnreadCount();
  }
}
