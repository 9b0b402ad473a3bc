/**
 * FieldForge's service worker (CONTRACTS C5 "Web Push"), registered by My profile's push opt-in
 * with scope `/web/`. It shows each push as a notification (title: who wrote, body: what), opens
 * the record's form on click (focusing a tab of the client when one is open), and when the
 * browser renews the subscription (`pushsubscriptionchange`, which Odoo ignored: odoo PR #275217)
 * subscribes again with the database's current key and tells the server, so pushes never
 * silently stop. It caches nothing: the client is always the server's current one.
 */
/// <reference lib="webworker" />
const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));

/** @param {string} base64url */
function keyBytes(base64url) {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(base64url.length / 4) * 4, '=');
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

/** The CSRF token the server set beside the session cookie: from the Cookie Store, else asked of an open page. */
async function csrfToken() {
  const store = /** @type {{cookieStore?: {get(name: string): Promise<{value: string} | null>}}} */ (/** @type {unknown} */ (sw)).cookieStore;
  const cookie = store ? await store.get('ff_csrf').catch(() => null) : null;
  if (cookie?.value) return cookie.value;
  const windows = await sw.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const client of windows) {
    const token = await new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = (event) => resolve(event.data);
      client.postMessage({ type: 'ff:csrf' }, [channel.port2]);
      setTimeout(() => resolve(null), 1_000);
    });
    if (token) return /** @type {string} */ (token);
  }
  return null;
}

sw.addEventListener('install', () => sw.skipWaiting());
sw.addEventListener('activate', (event) => event.waitUntil(sw.clients.claim()));

sw.addEventListener('push', (event) => {
  /** @type {{title?: string, body?: string, url?: string, message_id?: number}} */
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { body: event.data ? event.data.text() : '' };
  }
  event.waitUntil(sw.registration.showNotification(data.title || 'FieldForge', {
    body: data.body || '',
    tag: data.message_id ? `message-${data.message_id}` : undefined,
    data: { url: data.url || '/web' },
    icon: '/web/icons/fieldforge.svg',
  }));
});

sw.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || '/web', sw.location.origin).href;
  event.waitUntil((async () => {
    const windows = await sw.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const open = windows.find((c) => new URL(c.url).pathname.startsWith('/web'));
    if (open) {
      await open.navigate(url).catch(() => undefined);
      return open.focus();
    }
    return sw.clients.openWindow(url);
  })());
});

sw.addEventListener('pushsubscriptionchange', (event) => {
  const change = /** @type {Event & {oldSubscription?: PushSubscription | null, waitUntil(p: Promise<unknown>): void}} */ (event);
  change.waitUntil((async () => {
    const res = await fetch('/api/push/key', { credentials: 'same-origin' });
    if (!res.ok) return;
    const { public_key } = await res.json();
    const subscription = await sw.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(public_key) });
    const token = await csrfToken();
    /** @type {Record<string, string>} */
    const headers = { 'content-type': 'application/json' };
    if (token) headers['X-CSRF-Token'] = token;
    await fetch('/api/push/subscribe', { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify({ subscription: subscription.toJSON() }) });
    if (change.oldSubscription && change.oldSubscription.endpoint !== subscription.endpoint) {
      await fetch('/api/push/unsubscribe', { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify({ endpoint: change.oldSubscription.endpoint }) });
    }
  })());
});
