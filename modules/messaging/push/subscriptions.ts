/**
 * Subscribing a browser to Web Push and unsubscribing it (CONTRACTS C5): the subscription's JSON
 * as the browser gives it (`{endpoint, keys: {p256dh, auth}}`), its endpoint checked by the SSRF
 * guard, stored for the caller. An endpoint is one browser: subscribing it again — the browser
 * renewed it (`pushsubscriptionchange`), or another user signed in there — updates the one row.
 */
import { BadRequest, QuerySet, UserError, currentEnv, withEnv } from 'fieldforge';
import { assertPushEndpoint } from './endpoint-guard.js';
import { vapidKeys } from './vapid-keys.js';

const KEY = /^[A-Za-z0-9_-]+={0,2}$/;

function rows(): QuerySet {
  return new QuerySet(currentEnv().registry.meta('PushSubscription'));
}

export async function publicKey(): Promise<{ public_key: string }> {
  const keys = await vapidKeys();
  if (!keys) throw new UserError('This database has no Web Push key yet: upgrade the messaging module');
  return { public_key: keys.publicKey };
}

export async function subscribe(body: Record<string, unknown>): Promise<{ subscribed: true }> {
  const { uid } = currentEnv();
  if (!uid) throw new UserError('Web Push needs a signed-in user');
  const sub = body.subscription as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } } | undefined;
  if (!sub || typeof sub !== 'object') throw new BadRequest('subscription must be the browser\'s PushSubscription: {endpoint, keys: {p256dh, auth}}', { field: 'subscription' });
  const url = await assertPushEndpoint(sub.endpoint);
  const { p256dh, auth } = sub.keys ?? {};
  if (typeof p256dh !== 'string' || !KEY.test(p256dh) || p256dh.length > 255 || Buffer.from(p256dh, 'base64url').length !== 65) {
    throw new BadRequest('subscription.keys.p256dh must be the browser\'s P-256 public key (base64url, 65 bytes)', { field: 'subscription' });
  }
  if (typeof auth !== 'string' || !KEY.test(auth) || Buffer.from(auth, 'base64url').length !== 16) {
    throw new BadRequest('subscription.keys.auth must be the browser\'s 16-byte auth secret (base64url)', { field: 'subscription' });
  }
  const keys = await vapidKeys();
  const vals = { user: uid, p256dh, auth, vapid_public_key: keys?.publicKey ?? null };
  await withEnv({ su: true }, async () => {
    const [existing] = await rows().filter({ endpoint: url.href }).for_update().ids();
    if (existing) await rows().filter({ id: existing }).update(vals);
    else await currentEnv().registry.meta('PushSubscription').cls.create({ ...vals, endpoint: url.href });
  });
  return { subscribed: true };
}

/** Forgets the caller's subscription of `{endpoint}` (or `{subscription: {endpoint}}`); answers how many went. */
export async function unsubscribe(body: Record<string, unknown>): Promise<{ unsubscribed: number }> {
  const { uid } = currentEnv();
  const endpoint = body.endpoint ?? (body.subscription as { endpoint?: unknown } | undefined)?.endpoint;
  if (typeof endpoint !== 'string' || !endpoint) throw new BadRequest('Send the endpoint to unsubscribe: {endpoint} or {subscription: {endpoint}}', { field: 'endpoint' });
  let href = endpoint;
  try {
    href = new URL(endpoint).href;
  } catch { /* compared as given */ }
  const gone = await withEnv({ su: true }, () => rows().filter({ endpoint: href, user: uid }).delete());
  return { unsubscribed: gone };
}
