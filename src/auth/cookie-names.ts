/**
 * The names of the cookies a browser session travels in (set by `http/session-cookies.ts`): named
 * here, below the API, because the OpenAPI document describes the session cookie as a security
 * scheme and the HTTP layer sets it.
 */
export const SESSION_COOKIE = 'ff_session';
export const REFRESH_COOKIE = 'ff_refresh';
export const CSRF_COOKIE = 'ff_csrf';
