/**
 * Whether a widget holds typed text that is no value (`31/02/2026`, `12.5.0`), told to the form
 * through `onUnreadable` as it changes, and once more when the widget goes away (a removed line,
 * a discarded edit), so the form never refuses to save over text that is no longer on the page.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * @param {((message: string | null) => void) | undefined} onUnreadable
 * @returns {[boolean, (message: string | null) => void]} whether the text is unreadable, and
 *   `flag(message)` to say it is (a message) or reads again (null)
 */
export function useUnreadable(onUnreadable) {
  const [bad, setBad] = useState(false);
  const state = useRef({ bad: false, onUnreadable });
  state.current.onUnreadable = onUnreadable;

  useEffect(() => () => {
    if (state.current.bad) state.current.onUnreadable?.(null);
  }, []);

  /** @param {string | null} message */
  const flag = (message) => {
    if (message === null && !state.current.bad) return;
    state.current.bad = message !== null;
    setBad(message !== null);
    state.current.onUnreadable?.(message);
  };
  return [bad, flag];
}
