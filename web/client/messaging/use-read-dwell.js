/**
 * Spec §6.5 rule 5 and §8 item 7: once the form of a saved record has stayed open 10 seconds, the
 * caller's unread rows of that record are marked read (`{model, document}` scope), and the badge
 * shows the server's new count. Only time the page is visible counts (a form left open in a
 * background tab has not been read), and a message arriving while the form is open starts the 10
 * seconds again, so it too is marked once it has been on screen that long.
 */
import { useEffect } from 'preact/hooks';
import { markRead } from './activity-stream.js';

export const READ_AFTER_MS = 10_000;

/** @param {string} model @param {number} id @param {number} arrivals changes when a message arrives */
export function useReadDwell(model, id, arrivals) {
  useEffect(() => {
    let elapsed = 0;
    /** @type {number | null} */
    let since = null;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    let done = false;
    const fire = () => {
      done = true;
      markRead({ model, document: id }).catch((err) => console.warn('FieldForge: the messages of this record could not be marked read', err));
    };
    const run = () => {
      if (done || since !== null || document.hidden) return;
      since = Date.now();
      timer = setTimeout(fire, Math.max(0, READ_AFTER_MS - elapsed));
    };
    const pause = () => {
      if (since === null) return;
      elapsed += Date.now() - since;
      since = null;
      clearTimeout(timer);
    };
    const visibility = () => (document.hidden ? pause() : run());
    document.addEventListener('visibilitychange', visibility);
    run();
    return () => {
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', visibility);
    };
  }, [model, id, arrivals]);
}
