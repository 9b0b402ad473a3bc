/**
 * Signed file URLs (ARCHITECTURE §9): `/filestore/<action>/<id>?db=…&expires=…&sig=…`. A browser
 * cannot add headers to an <img> or a download link, so the database travels in the query string
 * and the HMAC covers database, attachment id, action and expiry: changing any of them, or using
 * the URL after `expires`, fails the check. The key is derived for this purpose only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { purposeKey } from '../config/secret.js';

export type FileAction = 'view' | 'download';

/** Lifetime of a URL handed out by `GET /api/files/{id}/url`. */
export const SIGNED_URL_SECONDS = 3600;

function signature(secret: string, db: string, id: number, action: FileAction, expires: number): string {
  return createHmac('sha256', purposeKey(secret, 'file-url')).update(`${db}\n${id}\n${action}\n${expires}`).digest('base64url');
}

export function signedFileUrl(secret: string, db: string, id: number, action: FileAction, ttlSeconds = SIGNED_URL_SECONDS, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + ttlSeconds;
  const query = new URLSearchParams({ db, expires: String(expires), sig: signature(secret, db, id, action, expires) });
  return `/filestore/${action}/${id}?${query}`;
}

/** True when `sig` signs exactly these values and `expires` (Unix seconds) has not passed. */
export function verifyFileSignature(
  secret: string, db: string, id: number, action: FileAction, expires: unknown, sig: unknown, now = Date.now(),
): boolean {
  if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof sig !== 'string') return false;
  const exp = Number(expires);
  if (exp * 1000 <= now) return false;
  const expected = Buffer.from(signature(secret, db, id, action, exp));
  const given = Buffer.from(sig);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
