/**
 * CSRF protection for cookie-carried sessions (double submit, bound to the session): the token is
 * an HMAC of the session id under a key derived from the platform secret, handed to the page in a
 * readable cookie (`ff_csrf`) and in the sign-in answer; a cookie-authenticated request that may
 * change something must send it back in `X-CSRF-Token`. Another site can make the browser send the
 * session cookie, but cannot read the token — and it is useless for any other session.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { purposeKey } from '../config/secret.js';

export const CSRF_HEADER = 'x-csrf-token';

export function csrfToken(secret: string, sessionId: number): string {
  return createHmac('sha256', purposeKey(secret, 'csrf')).update(String(sessionId)).digest('base64url');
}

export function csrfTokenMatches(secret: string, sessionId: number, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length > 100) return false;
  const expected = Buffer.from(csrfToken(secret, sessionId));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
