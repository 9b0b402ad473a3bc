/**
 * A record's thread for the chatter: its `messages` (newest first) and `followers`, read with the
 * record fetch of the generic API, and read again whenever a message for this record arrives on
 * the socket (`message` for followers and the mentioned, `record_message` for the others
 * watching it; spec §6.1), when the record changes (an assignment adds a follower), and when the
 * socket reconnects (frames may have been missed). The record is watched meanwhile, so that
 * `record_message` reaches this tab. Only the latest read answers.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { onActivity, onRealtimeStatus, watchRecord } from '../realtime/socket.js';

/**
 * @typedef {{id: number, display_name: string}} Link
 * @typedef {{id: number, author: Link | null, author_name?: string | null, content: string, message_type: string, created_date: string,
 *   attachments?: {id: number, name: string, mimetype: string | null}[]}} ThreadMessage
 * @typedef {{id: number, contact: Link, user_id: number | null}} Follower
 */

/** @param {unknown} value @returns {any[]} */
const list = (value) => (Array.isArray(value) ? value : []);

/** @param {any} row @returns {Follower | null} */
function followerOf(row) {
  if (!row || typeof row !== 'object') return null;
  const contact = row.contact && typeof row.contact === 'object' ? row.contact : null;
  return contact && typeof contact.id === 'number' ? { id: row.id, contact, user_id: typeof row.user_id === 'number' ? row.user_id : null } : null;
}

/**
 * @param {string} model @param {number} id
 * @returns {{messages: ThreadMessage[] | null, followers: Follower[], error: string | null, reload: () => Promise<void>, arrivals: number}}
 */
export function useThread(model, id) {
  const [messages, setMessages] = useState(/** @type {ThreadMessage[] | null} */ (null));
  const [followers, setFollowers] = useState(/** @type {Follower[]} */ ([]));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  // Counts the live arrivals of messages for this record (the read dwell restarts on each).
  const [arrivals, setArrivals] = useState(0);
  const seq = useRef(0);

  const reload = async () => {
    const mine = ++seq.current;
    try {
      const row = /** @type {Record<string, unknown>} */ (await api.fetchRecord(model, id, { fields: ['messages', 'followers'] }));
      if (mine !== seq.current) return;
      setMessages(list(row.messages));
      setFollowers(list(row.followers).map(followerOf).filter((f) => f !== null));
      setError(null);
    } catch (err) {
      if (mine !== seq.current) return;
      setError(err instanceof Error ? err.message : String(err));
      setMessages((shown) => shown ?? []);
    }
  };

  useEffect(() => {
    setMessages(null);
    setFollowers([]);
    void reload();
    const ours = (/** @type {Record<string, any>} */ data) => data.model === model && Number(data.document ?? data.id) === id;
    const arrived = (/** @type {Record<string, any>} */ data) => {
      if (!ours(data)) return;
      setArrivals((n) => n + 1);
      void reload();
    };
    const offs = [
      watchRecord(model, id),
      onActivity('message', arrived),
      onActivity('record_message', arrived),
      onActivity('record_changed', (data) => { if (ours(data)) void reload(); }),
      onRealtimeStatus((up) => { if (up) void reload(); }),
    ];
    return () => {
      seq.current++;
      for (const off of offs) off();
    };
  }, [model, id]);

  return { messages, followers, error, reload, arrivals };
}
