/**
 * This browser's Web Push opt-in, in My profile: `Enable push notifications` subscribes the
 * device (the service worker and the server's key, `realtime/push-opt-in.js`), `Disable push
 * notifications` ends it. Where the browser has no push (`serviceWorker` and `PushManager`), or
 * the person blocked notifications for this site, it says so instead of offering a button that
 * cannot work.
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';

/**
 * @typedef {{subscribeToPush: () => Promise<unknown>, unsubscribeFromPush: () => Promise<unknown>, pushState: () => unknown}} PushModule
 * @typedef {'loading' | 'unsupported' | 'denied' | 'on' | 'off'} PushState
 */

const supported = () => typeof navigator !== 'undefined' && 'serviceWorker' in navigator && typeof window !== 'undefined' && 'PushManager' in window;

/** @type {Promise<PushModule | null> | null} */
let loading = null;
/** The push helper, loaded on first use; null when this client has none. */
function pushModule() {
  loading ??= import(/* @vite-ignore */ new URL('../realtime/push-opt-in.js', import.meta.url).href).then(
    (m) => (typeof m.subscribeToPush === 'function' && typeof m.pushState === 'function' ? /** @type {PushModule} */ (m) : null),
    () => null,
  );
  return loading;
}

/** @param {unknown} state @returns {PushState} */
function stateOf(state) {
  const text = typeof state === 'string' ? state : null;
  const object = state && typeof state === 'object' ? /** @type {Record<string, unknown>} */ (state) : null;
  if (text === 'unsupported' || object?.supported === false) return 'unsupported';
  if (text === 'denied' || object?.permission === 'denied') return 'denied';
  if (text === 'subscribed' || text === 'on' || object?.subscribed === true) return 'on';
  return 'off';
}

export function PushToggle() {
  const [state, setState] = useState(/** @type {PushState} */ (supported() ? 'loading' : 'unsupported'));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string | null} */ (null));

  const read = async () => {
    const push = await pushModule();
    setState(push ? stateOf(await push.pushState()) : 'unsupported');
  };

  useEffect(() => {
    if (state === 'loading') read().catch((err) => { setState('off'); setError(err instanceof Error ? err.message : String(err)); });
  }, []);

  const toggle = async () => {
    setBusy(true);
    setError(null);
    try {
      const push = await pushModule();
      if (!push) throw new Error('Push notifications are not available in this version of the client.');
      if (state === 'on') await push.unsubscribeFromPush();
      else await push.subscribeToPush();
      await read();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const words = {
    loading: 'Checking this browser…',
    unsupported: 'This browser cannot receive push notifications.',
    denied: 'Notifications are blocked for this site in this browser. Allow them in the browser’s site settings, then come back here.',
    on: 'This browser receives push notifications.',
    off: 'This browser does not receive push notifications.',
  };
  return html`<div class="ff-push-toggle">
    <p class="ff-settings-hint" role="status">${words[state]}</p>
    ${state === 'on' || state === 'off' ? html`<button type="button" class="ff-button" disabled=${busy} onClick=${toggle}>
      ${state === 'on' ? 'Disable push notifications' : 'Enable push notifications'}</button>` : null}
    ${error ? html`<p class="ff-error-text" role="alert">${error}</p>` : null}
  </div>`;
}
