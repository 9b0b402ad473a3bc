/**
 * The browser's way to carry a session (server-rendered pages): the access token in an HttpOnly
 * cookie, the refresh token in an HttpOnly cookie scoped to `/auth`, and the CSRF token in a
 * readable one. `Secure` whenever the request came over HTTPS. Bearer stays the API's way; a
 * request with an Authorization header ignores the cookies.
 */
import type {} from '@fastify/cookie'; // its declarations add setCookie/cookies to Fastify's types
import type { FastifyReply, FastifyRequest } from 'fastify';
import { csrfToken } from '../auth/csrf.js';
import { SESSION_DAYS, type SessionTokens } from '../auth/sessions.js';
import { CSRF_COOKIE, REFRESH_COOKIE, SESSION_COOKIE } from '../auth/cookie-names.js';

export { CSRF_COOKIE, REFRESH_COOKIE, SESSION_COOKIE };

/** Sets the three cookies for freshly issued tokens; returns the CSRF token for the answer. */
export function setSessionCookies(req: FastifyRequest, reply: FastifyReply, tokens: SessionTokens, sessionId: number, secret: string, sessionHours: number): string {
  const secure = req.protocol === 'https';
  const csrf = csrfToken(secret, sessionId);
  void reply.setCookie(SESSION_COOKIE, tokens.access_token, { httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: Math.round(sessionHours * 3600) });
  void reply.setCookie(REFRESH_COOKIE, tokens.refresh_token, { httpOnly: true, sameSite: 'strict', secure, path: '/auth', maxAge: SESSION_DAYS * 86_400 });
  void reply.setCookie(CSRF_COOKIE, csrf, { httpOnly: false, sameSite: 'lax', secure, path: '/', maxAge: SESSION_DAYS * 86_400 });
  return csrf;
}

export function clearSessionCookies(reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, { path: '/' });
  void reply.clearCookie(REFRESH_COOKIE, { path: '/auth' });
  void reply.clearCookie(CSRF_COOKIE, { path: '/' });
}
