/**
 * FieldForge's service worker (CONTRACTS C5 "Web Push"), registered by My profile's push opt-in
 * with scope `/web/`. It shows each push as a notification (title: who wrote, body: what), opens
 * the record's form on click (focusing a tab of the client when one is open), and when the
 * browser renews the subscription (`pushsubscriptionchange`, which Odoo ignored: odoo PR #275217)
 * subscribes again with the database's current key and tells the server, so pushes never
 * silently stop — with the renewal token the page handed it after subscribing (`ff:push-renewal`
 * messages, kept in IndexedDB), since a renewal comes hours or days later, when the session that
 * subscribed has expired (Odoo lost those: odoo PR #275954). It caches nothing: the client is
 * always the server's current one.
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

/** @typedef {{database: string, renewal_token: string, public_key: string}} Renewal */

const RENEWAL_DB = 'fieldforge-push';
const RENEWAL_STORE = 'renewal';

/** Runs `fn` on the renewal store, answering what its request yields. @param {IDBTransactionMode} mode @param {(store: IDBObjectStore) => IDBRequest} fn */
function renewalStore(mode, fn) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(RENEWAL_DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(RENEWAL_STORE);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const request = fn(db.transaction(RENEWAL_STORE, mode).objectStore(RENEWAL_STORE));
      request.onsuccess = () => {
        resolve(request.result);
        db.close();
      };
      request.onerror = () => {
        reject(request.error);
        db.close();
      };
    };
  });
}

/** @returns {Promise<Renewal | null>} */
async function readRenewal() {
  return /** @type {Renewal | undefined} */ (await renewalStore('readonly', (s) => s.get('current')).catch(() => undefined)) ?? null;
}

/** @param {Renewal | null} renewal */
function writeRenewal(renewal) {
  return renewalStore('readwrite', (s) => (renewal ? s.put(renewal, 'current') : s.delete('current')));
}

/** Headers naming the database the subscription belongs to (the `ff_db` cookie may name another by now). @param {Renewal | null} saved */
function databaseHeaders(saved) {
  /** @type {Record<string, string>} */
  const headers = { 'content-type': 'application/json' };
  if (saved?.database) headers['X-DB-NAME'] = saved.database;
  return headers;
}

/**
 * The key to subscribe again with: the database's current one when the session still works, else
 * the one saved when subscribing, else the old subscription's.
 * @param {Renewal | null} saved @param {PushSubscription | null | undefined} old @returns {Promise<BufferSource>}
 */
async function currentKey(saved, old) {
  const res = await fetch('/api/push/key', { credentials: 'same-origin', headers: databaseHeaders(saved) }).catch(() => null);
  if (res?.ok) return keyBytes((await res.json()).public_key);
  if (saved?.public_key) return keyBytes(saved.public_key);
  const previous = old?.options.applicationServerKey;
  if (previous) return previous;
  throw new Error('No Web Push key to subscribe again with: open the web client');
}

/**
 * Tells the server of the browser's renewed `subscription`: with the renewal token (no session
 * needed), else with the session cookie, which then hands out a token for next time.
 * @param {{endpoint: string, toJSON(): unknown}} subscription @param {string | null} oldEndpoint @returns {Promise<boolean>}
 */
async function renewSubscription(subscription, oldEndpoint) {
  const saved = await readRenewal();
  if (saved?.renewal_token) {
    const res = await fetch('/push/renew', {
      method: 'POST', credentials: 'omit', headers: databaseHeaders(saved),
      body: JSON.stringify({ renewal_token: saved.renewal_token, subscription: subscription.toJSON() }),
    }).catch(() => null);
    if (res?.ok) return true;
  }
  const headers = databaseHeaders(saved);
  const token = await csrfToken();
  if (token) headers['X-CSRF-Token'] = token;
  const res = await fetch('/api/push/subscribe', { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify({ subscription: subscription.toJSON() }) });
  if (!res.ok) return false;
  const answer = await res.json();
  if (saved) await writeRenewal({ ...saved, database: answer.database, renewal_token: answer.renewal_token });
  if (oldEndpoint && oldEndpoint !== subscription.endpoint) {
    await fetch('/api/push/unsubscribe', { method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify({ endpoint: oldEndpoint }) }).catch(() => null);
  }
  return true;
}

// The page hands over (or withdraws, with null) what a renewal needs, and hears when it is kept.
sw.addEventListener('message', (event) => {
  if (event.data?.type !== 'ff:push-renewal') return;
  const reply = (/** @type {boolean} */ ok) => event.ports[0]?.postMessage(ok);
  event.waitUntil(writeRenewal(event.data.renewal ?? null).then(() => reply(true), () => reply(false)));
});

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
  const change = /** @type {Event & {oldSubscription?: PushSubscription | null, newSubscription?: PushSubscription | null, waitUntil(p: Promise<unknown>): void}} */ (event);
  change.waitUntil((async () => {
    const subscription = change.newSubscription
      ?? await sw.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: await currentKey(await readRenewal(), change.oldSubscription) });
    await renewSubscription(subscription, change.oldSubscription?.endpoint ?? null);
  })());
});
