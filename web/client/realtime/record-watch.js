/**
 * A view's watch of one record (spec §6.3): `watch` sent now (or once the socket says `hello`),
 * `unwatch` when the view lets go, and `onChanged` with each `record_changed` frame about it.
 */
import { onActivity, watchRecord } from './socket.js';

/**
 * @typedef {{kind: 'record_changed', model: string, id: number, fields?: string[],
 *   updated_by?: {id: number, display_name: string} | null, updated_date?: string}} RecordChanged
 */

/**
 * @param {string} model @param {number} id @param {(change: RecordChanged) => void} onChanged
 * @returns {() => void} stop watching
 */
export function followRecord(model, id, onChanged) {
  const unwatch = watchRecord(model, id);
  const off = onActivity('record_changed', (data) => {
    if (data.model === model && Number(data.id) === id) onChanged(/** @type {RecordChanged} */ (data));
  });
  return () => {
    off();
    unwatch();
  };
}
