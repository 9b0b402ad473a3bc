/**
 * The VAPID `Authorization` header (RFC 8292) of one push service, signed once and reused: a JWT
 * names only the push service's origin (`aud`), the subject and an expiry, so every push to that
 * service may carry the same one until it nears its end (RFC 8292 §2 allows the reuse). Signing
 * it (ES256) cost as much as encrypting the payload, so a burst of pushes to FCM signs once instead
 * of once per push. Renewed an hour before it expires; a few hundred origins at most are kept.
 */
import webpush from 'web-push';
import type { VapidKeys } from './vapid-keys.js';

/** How long a signed JWT is valid (push services refuse more than 24 hours). */
export const VAPID_LIFETIME_S = 12 * 3600;
const RENEW_BEFORE_S = 3600;
const MAX_CACHED = 500;

const signed = new Map<string, { authorization: string; expires: number }>();

/** The header for pushes to `audience` (an endpoint's origin), signed with `keys`. */
export function vapidAuthorization(audience: string, keys: VapidKeys, nowS = Math.floor(Date.now() / 1000)): string {
  const key = `${keys.publicKey}\n${keys.subject}\n${audience}`;
  const cached = signed.get(key);
  if (cached && cached.expires - RENEW_BEFORE_S > nowS) return cached.authorization;
  const expires = nowS + VAPID_LIFETIME_S;
  const { Authorization } = webpush.getVapidHeaders(audience, keys.subject, keys.publicKey, keys.privateKey, 'aes128gcm', expires);
  signed.delete(key);
  if (signed.size >= MAX_CACHED) signed.delete(signed.keys().next().value!);
  signed.set(key, { authorization: Authorization, expires });
  return Authorization;
}
