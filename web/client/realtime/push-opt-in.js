/**
 * This browser's Web Push subscription (CONTRACTS C5): `subscribeToPush()` registers the service
 * worker (`/web/sw.js`), asks the person's permission, subscribes with the database's key
 * (`GET /api/push/key`) and hands the subscription to the server; `unsubscribeFromPush()` ends it
 * on both sides; `pushState()` says where this browser stands; `syncPushSubscription()`, called
 * as the web client starts, hands an existing subscription to the server again (a renewal the
 * worker could not deliver, a subscription made with another key). After each subscribe the
 * worker is given the renewal token, so it can deliver the browser's renewals without a session.
 * The page also answers the worker's request for the CSRF token (a worker reads no cookies where
 * the Cookie Store is missing).
 */
import { api } from '../api.js';

const SCOPE = '/web/';

/** @param {string} base64url */
function keyBytes(base64url) {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(base64url.length / 4) * 4, '=');
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

function supported() {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

if (supported()) {
  navigator.serviceWorker.addEventListener('message', (event) => {
    if (event.data?.type !== 'ff:csrf' || !event.ports[0]) return;
    const match = /(?:^|;\s*)ff_csrf=([^;]*)/.exec(document.cookie);
    event.ports[0].postMessage(match ? decodeURIComponent(match[1] ?? '') : null);
  });
}

/**
 * Hands the service worker what it needs to renew the subscription without a session (null: the
 * subscription is gone), answering whether it kept it.
 * @param {ServiceWorkerRegistration} reg
 * @param {{database: string, renewal_token: string, public_key: string} | null} renewal
 * @returns {Promise<boolean>}
 */
function tellWorker(reg, renewal) {
  const worker = reg.active ?? reg.waiting ?? reg.installing;
  if (!worker) return Promise.resolve(false);
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data === true);
    worker.postMessage({ type: 'ff:push-renewal', renewal }, [channel.port2]);
    setTimeout(() => resolve(false), 2_000);
  });
}

async function registration() {
  return (await navigator.serviceWorker.getRegistration(SCOPE)) ?? navigator.serviceWorker.register('/web/sw.js', { scope: SCOPE, type: 'classic' });
}

/** @returns {Promise<{supported: boolean, permission: NotificationPermission | null, subscribed: boolean}>} */
export async function pushState() {
  if (!supported()) return { supported: false, permission: null, subscribed: false };
  const reg = await navigator.serviceWorker.getRegistration(SCOPE);
  const subscription = reg ? await reg.pushManager.getSubscription() : null;
  return { supported: true, permission: Notification.permission, subscribed: subscription !== null };
}

export async function subscribeToPush() {
  if (!supported()) throw new Error('This browser cannot receive push notifications.');
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') throw new Error('Notifications are not allowed for this site in this browser.');
  const reg = await registration();
  await navigator.serviceWorker.ready;
  const { public_key } = /** @type {{public_key: string}} */ (await api.get('/api/push/key'));
  let subscription = await reg.pushManager.getSubscription();
  // A subscription made with another key (a restored database) cannot receive this one's pushes.
  const current = subscription?.options.applicationServerKey;
  if (subscription && current && btoa(String.fromCharCode(...new Uint8Array(current))) !== btoa(String.fromCharCode(...keyBytes(public_key)))) {
    await subscription.unsubscribe();
    subscription = null;
  }
  subscription ??= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(public_key) });
  const answer = /** @type {{database: string, renewal_token: string}} */ (await api.post('/api/push/subscribe', { subscription: subscription.toJSON() }));
  await tellWorker(reg, { database: answer.database, renewal_token: answer.renewal_token, public_key });
  return subscription;
}

/**
 * Where notifications are allowed and this browser has a subscription, hands it to the server
 * again (re-subscribing first if it was made with another key): call it as the web client
 * starts, signed in. Answers whether there was one. Never asks the person anything.
 * @returns {Promise<boolean>}
 */
export async function syncPushSubscription() {
  if (!supported() || Notification.permission !== 'granted') return false;
  const reg = await navigator.serviceWorker.getRegistration(SCOPE);
  if (!reg || !(await reg.pushManager.getSubscription())) return false;
  await subscribeToPush();
  return true;
}

export async function unsubscribeFromPush() {
  if (!supported()) return;
  const reg = await navigator.serviceWorker.getRegistration(SCOPE);
  const subscription = reg ? await reg.pushManager.getSubscription() : null;
  if (!subscription) return;
  await api.post('/api/push/unsubscribe', { endpoint: subscription.endpoint });
  await subscription.unsubscribe();
  if (reg) await tellWorker(reg, null);
}
