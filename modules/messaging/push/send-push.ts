/**
 * Sends one Web Push: the request is built by `web-push` (`generateRequestDetails`: the payload
 * encrypted aes128gcm for the subscription's keys, RFC 8291), signed with the database's VAPID key
 * (RFC 8292, one JWT per push service: `vapid-header.ts`) and sent here with node:http/https, because `web-push`'s own sender speaks only
 * HTTPS (C5 precision 8). The endpoint is checked again first (`endpoint-guard.ts`) and the
 * connection goes to the addresses that check resolved, never to a second lookup's; redirects are
 * not followed, the service's answer is read no further than `MAX_ANSWER_BYTES`, and a push
 * service silent for `PUSH_TIMEOUT_MS` once the request has its socket is given up on (a retry).
 */
import type { LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import webpush from 'web-push';
import { pushTarget, type PushTarget } from './endpoint-guard.js';
import { vapidAuthorization } from './vapid-header.js';
import type { VapidKeys } from './vapid-keys.js';

/** How long a push is worth delivering: a browser offline for a day gets yesterday's news no more. */
export const PUSH_TTL_SECONDS = 24 * 3600;
export const PUSH_TIMEOUT_MS = 10_000;
/** The Web Push payload limit (RFC 8291 §4: 4096 octets of record; push services refuse more). */
export const MAX_PAYLOAD_BYTES = 3_800;
/** What is kept of a push service's answer (for the log): it says little, and may say too much. */
const MAX_ANSWER_BYTES = 4_096;
/**
 * Connections per push service and worker, kept alive: a push service is one or a few hosts (FCM,
 * Mozilla, Apple), so a burst of pushes reuses a few TLS sessions instead of opening one each,
 * and many drains at once queue here rather than open a thousand sockets.
 */
const SOCKETS_PER_ORIGIN = 32;
const AGENT_OPTIONS = { keepAlive: true, maxSockets: SOCKETS_PER_ORIGIN, maxFreeSockets: 8, scheduling: 'lifo' } as const;
const agents = { 'http:': new HttpAgent(AGENT_OPTIONS), 'https:': new HttpsAgent(AGENT_OPTIONS) };

export interface StoredSubscription {
  endpoint: string;
  p256dh: string;
  auth: string;
  /** The database key the browser subscribed with, as stored at subscribe time. */
  vapid_public_key?: string | null;
}

/**
 * What became of a push: sent; gone (the subscription is dead: remove it); worth another try;
 * refused (this push will never go: the endpoint is no longer allowed, or the service refused it).
 */
export type PushResult = 'sent' | 'gone' | 'retry' | 'refused';

export interface SendOptions {
  timeoutMs?: number;
}

export async function sendPush(
  subscription: StoredSubscription, payload: Record<string, unknown>, keys: VapidKeys, options: SendOptions = {},
): Promise<PushResult> {
  let target: PushTarget;
  try {
    target = await pushTarget(subscription.endpoint);
  } catch {
    return 'refused';
  }
  // Encrypted here, signed once per push service (`vapid-header.ts`): no `vapidDetails`.
  const details = webpush.generateRequestDetails(
    { endpoint: target.url.href, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
    fittedPayload(payload),
    { TTL: PUSH_TTL_SECONDS, urgency: 'normal', contentEncoding: 'aes128gcm' },
  );
  const headers = { ...(details.headers as Record<string, string | number>), Authorization: vapidAuthorization(target.url.origin, keys) };
  let answer: PushAnswer;
  try {
    answer = await postPinned(target, headers, details.body, options.timeoutMs ?? PUSH_TIMEOUT_MS);
  } catch {
    return 'retry';
  }
  return verdict(answer, subscription, keys);
}

function verdict({ status, text }: PushAnswer, subscription: StoredSubscription, keys: VapidKeys): PushResult {
  if (status >= 200 && status < 300) return 'sent';
  if (status === 404 || status === 410) return 'gone';
  if (status === 403) {
    // A subscription made with another key than the database's (a copy of another database's
    // row) can never be pushed to: it goes. One made with this key was refused for the signature
    // itself (a clock, a subject the service dislikes): kept, retried, and said in the log —
    // removing it would silently stop this browser's pushes for good.
    if (subscription.vapid_public_key !== keys.publicKey) return 'gone';
    console.warn(`push: ${new URL(subscription.endpoint).host} refused the VAPID signature (403): ${text.slice(0, 200)}`);
    return 'retry';
  }
  if (status === 429 || status >= 500) return 'retry';
  return 'refused';
}

export interface PushAnswer {
  status: number;
  text: string;
}

/**
 * POSTs `body` to `target.url`, connecting only to `target.addresses` (the name is not looked up
 * again), and answers the status with the beginning of the answer's text.
 */
export function postPinned(target: PushTarget, headers: Record<string, string | number>, body: Buffer | null, timeoutMs: number): Promise<PushAnswer> {
  const protocol = target.url.protocol as 'http:' | 'https:';
  const send = protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PushAnswer>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const req = send(target.url, { method: 'POST', headers, agent: agents[protocol], lookup: pinnedLookup(target.addresses) }, (res) => {
      readCapped(res).then((text) => resolve({ status: res.statusCode ?? 0, text }), reject);
    });
    // The clock starts when the request has its socket: waiting for one of the origin's
    // connections (a burst) is not the push service being slow.
    req.once('socket', () => {
      timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    req.once('close', () => clearTimeout(timer));
    req.once('error', reject);
    req.end(body ?? undefined);
  });
}

function readCapped(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
    res.on('data', (chunk: Buffer) => {
      if (size < MAX_ANSWER_BYTES) chunks.push(chunk.subarray(0, MAX_ANSWER_BYTES - size));
      size += chunk.length;
      if (size > 64 * MAX_ANSWER_BYTES) res.destroy(); // an answer that never ends: the socket goes, the status stays
    });
    res.once('end', done);
    res.once('close', done);
    res.once('error', done);
  });
}

/** A `lookup` that answers the addresses the guard checked, whatever the name. */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = family ? addresses.filter((a) => a.family === family) : [...addresses];
    if (!usable.length) {
      const err: NodeJS.ErrnoException = Object.assign(new Error(`no checked IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' });
      callback(err, '', 0);
    } else if (options.all) {
      callback(null, usable);
    } else {
      callback(null, usable[0]!.address, usable[0]!.family);
    }
  };
}

/** The payload as JSON within the limit: the body is shortened first, then the title. */
export function fittedPayload(payload: Record<string, unknown>): string {
  const text = JSON.stringify(payload);
  if (Buffer.byteLength(text) <= MAX_PAYLOAD_BYTES) return text;
  const shortened = { ...payload, body: String(payload.body ?? '').slice(0, 140), title: String(payload.title ?? '').slice(0, 200) };
  const fitted = JSON.stringify(shortened);
  return Buffer.byteLength(fitted) <= MAX_PAYLOAD_BYTES ? fitted : JSON.stringify({ kind: payload.kind, model: payload.model, document: payload.document, message_id: payload.message_id, url: payload.url });
}
