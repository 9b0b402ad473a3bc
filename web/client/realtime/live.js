/**
 * What the socket's frames do for the whole tab (CONTRACTS C4, spec §6.1): `notification` frames
 * are toasts (`info`, the title and message as sent: text, never markup), and client actions
 * (`realtime_data` `client_action`) reach the views that asked for them.
 *
 * Client actions understood: `reload` — given as `{action: 'reload'}`, `{action: {type: 'reload'}}`
 * or Odoo's `{action: {tag: 'reload'}}` — refetches the current view (a list reads its page again;
 * a clean form reads its record again, a form with unsaved edits asks first, as for a
 * `record_changed`). Any other action is ignored (logged at debug level). A socket refused for
 * the person's socket limit says so (`showSocketRefusals`).
 */
import { useEffect, useRef } from 'preact/hooks';
import { onFrame, onRealtime, onRealtimeStatus } from './socket.js';

/** Shows `notification` frames as toasts; answers the unsubscribe function. */
export function showNotifications() {
  return onFrame((frame) => {
    if (frame.type !== 'notification') return;
    const { title, message } = frame.data ?? {};
    window.fieldforge?.toast.show({
      type: 'info',
      title: typeof title === 'string' ? title : undefined,
      message: typeof message === 'string' ? message : '',
    });
  });
}

/**
 * A socket refused for the person's socket limit (an `error` frame `TooManySockets`, then close
 * 4029; the socket retries with its backoff) says so once, in a warning that stays until
 * dismissed, rather than leaving the tab silently without live updates. Said again only after a
 * socket of this tab has opened since. Answers the unsubscribe function.
 */
export function showSocketRefusals() {
  let said = false;
  const offStatus = onRealtimeStatus((connected) => {
    if (connected) said = false;
  });
  const offFrames = onFrame((frame) => {
    if (frame.type !== 'error' || frame.data?.error !== 'TooManySockets' || said) return;
    said = true;
    window.fieldforge?.toast.show({
      type: 'warning',
      title: 'Live updates paused',
      message: 'Too many FieldForge tabs or windows are open for your account. Close one and this tab resumes live updates by itself.',
      duration: 0,
    });
  });
  return () => {
    offStatus();
    offFrames();
  };
}

/** The name of a client action (`'reload'`), whatever shape it came in. @param {unknown} action */
export function clientActionName(action) {
  if (typeof action === 'string') return action;
  if (action && typeof action === 'object') {
    const { type, tag } = /** @type {{type?: unknown, tag?: unknown}} */ (action);
    if (typeof type === 'string') return type;
    if (typeof tag === 'string') return tag;
  }
  return null;
}

/**
 * Calls `handler` on each `reload` client action while the component is mounted.
 * @param {() => void} handler
 */
export function useReloadAction(handler) {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => onRealtime('client_action', (data) => {
    const name = clientActionName(data.action);
    if (name === 'reload') latest.current();
    else console.debug('FieldForge realtime: client action not handled', data.action);
  }), []);
}
