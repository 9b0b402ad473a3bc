/**
 * Subscribing a browser to Web Push and unsubscribing it (CONTRACTS C5): the subscription's JSON
 * as the browser gives it (`{endpoint, keys: {p256dh, auth}}`), its endpoint checked by the SSRF
 * guard, stored for the caller. An endpoint is one browser: subscribing it again — the browser
 * renewed it (`pushsubscriptionchange`), or another user signed in there — updates the one row.
 *
 * Each subscribe answers a renewal token (stored hashed) that the service worker keeps: when the
 * browser renews the subscription, the worker re-points the row with it (`renew`, no session
 * needed). Odoo re-registered with the session cookie only, so a renewal after the session expired
 * was lost and pushes silently stopped (odoo PR #275954); FieldForge sessions last hours.
 */
import { createHash, randomBytes } from 'node:crypto';
import { BadRequest, NotFound, QuerySet, UserError, currentEnv, withEnv } from 'fieldforge';
import { assertPushEndpoint } from './endpoint-guard.js';
import { vapidKeys } from './vapid-keys.js';

const KEY = /^[A-Za-z0-9_-]+={0,2}$/;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface Subscribed {
  subscribed: true;
  /** Keep it beside the subscription (the service worker does): `renew` takes it instead of a session. */
  renewal_token: string;
}

interface BrowserSubscription {
  endpoint: string;
  p256dh: string;
  auth: string;
}

function rows(): QuerySet {
  return new QuerySet(currentEnv().registry.meta('PushSubscription'));
}

const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export async function publicKey(): Promise<{ public_key: string }> {
  const keys = await vapidKeys();
  if (!keys) throw new UserError('This database has no Web Push key yet: upgrade the messaging module');
  return { public_key: keys.publicKey };
}

/** The browser's PushSubscription JSON, checked: its endpoint by the SSRF guard, its keys by shape. */
async function browserSubscription(value: unknown): Promise<BrowserSubscription> {
  const sub = value as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } } | undefined;
  if (!sub || typeof sub !== 'object') throw new BadRequest('subscription must be the browser\'s PushSubscription: {endpoint, keys: {p256dh, auth}}', { field: 'subscription' });
  const url = await assertPushEndpoint(sub.endpoint);
  const { p256dh, auth } = sub.keys ?? {};
  if (typeof p256dh !== 'string' || !KEY.test(p256dh) || p256dh.length > 255 || Buffer.from(p256dh, 'base64url').length !== 65) {
    throw new BadRequest('subscription.keys.p256dh must be the browser\'s P-256 public key (base64url, 65 bytes)', { field: 'subscription' });
  }
  if (typeof auth !== 'string' || !KEY.test(auth) || Buffer.from(auth, 'base64url').length !== 16) {
    throw new BadRequest('subscription.keys.auth must be the browser\'s 16-byte auth secret (base64url)', { field: 'subscription' });
  }
  return { endpoint: url.href, p256dh, auth };
}

export async function subscribe(body: Record<string, unknown>): Promise<Subscribed> {
  const { uid } = currentEnv();
  if (!uid) throw new UserError('Web Push needs a signed-in user');
  const { endpoint, p256dh, auth } = await browserSubscription(body.subscription);
  const keys = await vapidKeys();
  const renewal_token = randomBytes(32).toString('base64url');
  const vals = { user: uid, p256dh, auth, vapid_public_key: keys?.publicKey ?? null, renewal_token_hash: tokenHash(renewal_token) };
  await withEnv({ su: true }, async () => {
    const [existing] = await rows().filter({ endpoint }).for_update().ids();
    if (existing) await rows().filter({ id: existing }).update(vals);
    else await currentEnv().registry.meta('PushSubscription').cls.create({ ...vals, endpoint });
  });
  return { subscribed: true, renewal_token };
}

/**
 * `{renewal_token, subscription}`: the row the token was given for now points at `subscription`
 * (the browser's renewed one, checked as at subscribe), for its user if still active. Another row
 * of that endpoint (the page subscribed it meanwhile) gives way. The token stays valid.
 */
export async function renew(body: Record<string, unknown>): Promise<{ renewed: true }> {
  const token = body.renewal_token;
  if (typeof token !== 'string' || !TOKEN.test(token)) throw new BadRequest('renewal_token must be the token /api/push/subscribe answered', { field: 'renewal_token' });
  const { endpoint, p256dh, auth } = await browserSubscription(body.subscription);
  const keys = await vapidKeys();
  await withEnv({ su: true }, async () => {
    const [row] = await rows().filter({ renewal_token_hash: tokenHash(token) }).for_update().ids();
    if (row === undefined || !(await rows().filter({ id: row, user__active: true }).exists())) throw new NotFound('No subscription has this renewal token (it was removed, or its user is archived): subscribe again from the web client');
    await rows().filter({ endpoint, id__not: row }).delete();
    await rows().filter({ id: row }).update({ endpoint, p256dh, auth, vapid_public_key: keys?.publicKey ?? null });
  });
  return { renewed: true };
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
