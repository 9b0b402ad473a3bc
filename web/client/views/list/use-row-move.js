/**
 * Moving a row of the page to another place (a drop, or Alt+arrow) in a list ordered by a
 * sequence (`row-reorder.js`): the new order is stored, the page shows it at once, the focus
 * stays on the row, and a screen reader hears where it went (`announcement`, a status line).
 */
import { useState } from 'preact/hooks';
import { errorDetail } from './error-detail.js';
import { moveRecord } from './row-reorder.js';

/**
 * @param {{
 *   model: string, records: import('./list-row.js').ListRecord[] | null, busy: boolean, enabled: boolean,
 *   state: import('./list-route.js').ListState, registry: import('./list-columns.js').Registry, archivable: boolean, defaultOrder: string[],
 *   run: (work: () => Promise<void>) => Promise<void>,
 *   showRecords: (records: import('./list-row.js').ListRecord[]) => void,
 * }} options `state`: the effective one; `run`: marks the list busy meanwhile
 */
export function useRowMove({ model, records, busy, enabled, state, registry, archivable, defaultOrder, run, showRecords }) {
  const [announcement, setAnnouncement] = useState('');

  /** @param {number} id @param {number} to */
  const moveRow = async (id, to) => {
    if (!records || busy || !enabled) return;
    const name = records.find((r) => r.id === id)?.display_name ?? `#${id}`;
    if (to < 0 || to >= records.length) {
      setAnnouncement(`${name} is already ${to < 0 ? 'first' : 'last'} on this page.`);
      return;
    }
    await run(async () => {
      try {
        const moved = await moveRecord({ model, records, id, to, state, registry, archivable, defaultOrder });
        if (!moved) return;
        showRecords(moved);
        setAnnouncement(`${name} moved to position ${moved.findIndex((r) => r.id === id) + 1} of ${moved.length}.`);
        requestAnimationFrame(() => /** @type {HTMLElement | null} */ (document.querySelector(`.ff-list-table tr[data-id="${id}"]`))?.focus());
      } catch (err) {
        window.fieldforge?.toast.show({ type: 'error', message: errorDetail(err) });
      }
    });
  };

  return { announcement, moveRow };
}
