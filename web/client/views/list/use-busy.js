/**
 * A list's actions on its records run one at a time: `run(work)` marks the list busy (its
 * selection bar's buttons disabled) until the work is done, failed or not.
 */
import { useState } from 'preact/hooks';

export function useBusy() {
  const [busy, setBusy] = useState(false);
  /** @param {() => Promise<void>} work */
  const run = async (work) => {
    setBusy(true);
    try {
      await work();
    } finally {
      setBusy(false);
    }
  };
  return { busy, run };
}
