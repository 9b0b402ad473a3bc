/**
 * Sends one Web Push: the request is built by `web-push` (`generateRequestDetails`: the payload
 * encrypted aes128gcm for the subscription's keys, RFC 8291, and signed with the database's VAPID
 * key, RFC 8292) and sent here with `fetch`, because `web-push`'s own sender speaks only HTTPS
 * (C5 precision 8). The endpoint is checked again first (`endpoint-guard.ts`), redirects are not
 * followed, and a slow push service is given up on after `PUSH_TIMEOUT_MS`.
 */
import webpush from 'web-push';
import { assertPushEndpoint } from './endpoint-guard.js';
import type { VapidKeys } from './vapid-keys.js';

/** How long a push is worth delivering: a browser offline for a day gets yesterday's news no more. */
export const PUSH_TTL_SECONDS = 24 * 3600;
export const PUSH_TIMEOUT_MS = 10_000;
/** The Web Push payload limit (RFC 8291 §4: 4096 octets of record; push services refuse more). */
export const MAX_PAYLOAD_BYTES = 3_800;

export interface StoredSubscription {
  endpoint: string;
  p256dh: string;
  auth: string;
}

/** What became of a push: sent, gone (404/410: the subscription is dead), or worth another try. */
export type PushResult = 'sent' | 'gone' | 'retry' | 'refused';

export async function sendPush(subscription: StoredSubscription, payload: Record<string, unknown>, keys: VapidKeys): Promise<PushResult> {
  try {
    await assertPushEndpoint(subscription.endpoint);
  } catch {
    return 'refused';
  }
  const details = webpush.generateRequestDetails(
    { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
    fittedPayload(payload),
    {
      vapidDetails: { subject: keys.subject, publicKey: keys.publicKey, privateKey: keys.privateKey },
      TTL: PUSH_TTL_SECONDS, urgency: 'normal', contentEncoding: 'aes128gcm',
    },
  );
  let status: number;
  try {
    const res = await fetch(details.endpoint, {
      method: details.method, headers: details.headers as Record<string, string>, body: details.body as Buffer,
      redirect: 'manual', signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
    });
    await res.arrayBuffer().catch(() => undefined);
    status = res.status;
  } catch {
    return 'retry';
  }
  if (status >= 200 && status < 300) return 'sent';
  if (status === 404 || status === 410 || status === 403) return 'gone'; // 403: signed with another key (a restored database)
  if (status === 429 || status >= 500) return 'retry';
  return 'refused';
}

/** The payload as JSON within the limit: the body is shortened first, then the title. */
export function fittedPayload(payload: Record<string, unknown>): string {
  const text = JSON.stringify(payload);
  if (Buffer.byteLength(text) <= MAX_PAYLOAD_BYTES) return text;
  const shortened = { ...payload, body: String(payload.body ?? '').slice(0, 140), title: String(payload.title ?? '').slice(0, 200) };
  const fitted = JSON.stringify(shortened);
  return Buffer.byteLength(fitted) <= MAX_PAYLOAD_BYTES ? fitted : JSON.stringify({ kind: payload.kind, model: payload.model, document: payload.document, message_id: payload.message_id, url: payload.url });
}
