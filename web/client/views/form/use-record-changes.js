/**
 * Live updates of the record a form shows (spec §6.3): while a saved record is shown (not a new
 * one, not in a dialog) it is watched, and each `record_changed` ping adds up with the ones before
 * it — who changed it and which fields — until the person answers the prompt. `seq` orders the
 * changes against the form's reads: a read clears only what was announced before it began.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { followRecord } from '../../realtime/record-watch.js';

/** @typedef {import('./record-changed-prompt.js').RecordChange} RecordChange */

/** @param {string} model @param {number | null} id @param {boolean} dialog */
export function useRecordChanges(model, id, dialog) {
  const [change, setChange] = useState(/** @type {RecordChange | null} */ (null));
  const changeSeq = useRef(0);

  useEffect(() => {
    setChange(null);
    if (id === null || dialog) return undefined;
    return followRecord(model, id, (ping) => {
      const seq = ++changeSeq.current;
      const by = ping.updated_by?.display_name ?? null;
      const names = Array.isArray(ping.fields) ? ping.fields.filter((f) => typeof f === 'string') : [];
      setChange((c) => ({ by: by ?? c?.by ?? null, fields: [...new Set([...(c?.fields ?? []), ...names])], seq }));
    });
  }, [model, id, dialog]);

  /** The server asked for a refetch while edits are pending: the prompt asks, as for a ping from no one. */
  const announce = () => setChange((c) => ({ by: c?.by ?? null, fields: c?.fields ?? [], seq: ++changeSeq.current }));

  return { change, setChange, changeSeq, announce };
}
