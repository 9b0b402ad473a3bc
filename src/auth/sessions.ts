/**
 * Sessions of signed-in people (spec §4.1, §5). An access token is a JWT (HS256, `jose`) that
 * claims its user, its database and its session, and lives `sessionHours` hours; a refresh token
 * is 256 random bits (`ffr_…`), stored only as its SHA-256 hash, and usable once: refreshing
 * rotates it. The session row is the token family — presenting a refresh token that was already
 * used (a stolen copy, or the legitimate one after the thief rotated it) revokes the session, and
 * every access token of it is refused from the next request on. Logout revokes it the same way,
 * and so does a deactivated user (checked on every request with the session, see `resolveSession`).
 */
import { hash, randomBytes } from 'node:crypto';
import { LazyModule } from '../lazy-module.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { purposeKey } from '../config/secret.js';
import { AuthenticationError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';
import { sessionState } from '../orm/system/credential-store.js';
import { rotateRefreshToken } from '../orm/system/session-store.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeRecords } from '../orm/write/write-records.js';
import { requestState, type RequestState } from './api-keys.js';
import { guardsInstalled } from './request-guard.js';

export const REFRESH_TOKEN_PREFIX = 'ffr_';
/** How long a refresh-token family lives without sign-in. */
export const SESSION_DAYS = 30;

export interface SessionConfig {
  dbName: string;
  secret: string;
  /** Access-token lifetime (`FF_SESSION_HOURS`, default 8). */
  sessionHours: number;
}

/** The answer of `/auth/authenticate` and `/auth/refresh` (spec §4.1). */
export interface SessionTokens {
  message: string;
  access_token: string;
  refresh_token: string;
  token_type: 'bearer';
  expires_at: string;
}

export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** `2026-11-21 16:04:05 UTC` */
export function utcStamp(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/**
 * `jose`, loaded on first use: ~50 ms of the start, and API-key requests never need it. Once
 * loaded, `jose` holds the module, so a request verifying a token awaits nothing for it. A failed
 * import rejects every call with the import's own error (not swallowed into "invalid token").
 */
const jose = new LazyModule(() => import('jose'));

function tokenKey(secret: string): Uint8Array {
  return purposeKey(secret, 'session-token');
}

async function issueTokens(uid: number, sessionId: number, config: SessionConfig, message: string): Promise<SessionTokens> {
  const expires = new Date(Date.now() + config.sessionHours * 3_600_000);
  // Whole seconds: JWT `exp` has no fractions, and the answer must name the instant it holds.
  expires.setUTCMilliseconds(0);
  const { SignJWT } = jose.loaded ?? (await jose.load());
  const accessToken = await new SignJWT({ db: config.dbName, sid: sessionId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(uid))
    // Unique per issue: two tokens of one session issued in the same second still differ.
    .setJti(randomBytes(12).toString('base64url'))
    .setIssuedAt()
    .setExpirationTime(Math.floor(expires.getTime() / 1000))
    .sign(tokenKey(config.secret));
  const refreshToken = REFRESH_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const { registry } = currentEnv();
  await createRecords(registry.meta('AuthRefreshToken'), [{ session: sessionId, token_hash: hashToken(refreshToken) }]);
  return { message: message, access_token: accessToken, refresh_token: refreshToken, token_type: 'bearer', expires_at: utcStamp(expires) };
}

/** Opens a session for `uid` and issues its first tokens (run elevated, in the sign-in's unit of work). */
export async function openSession(uid: number, config: SessionConfig): Promise<SessionTokens> {
  const { registry } = currentEnv();
  const [session] = await createRecords(registry.meta('AuthSession'), [{
    user: uid, expires_at: new Date(Date.now() + SESSION_DAYS * 86_400_000).toISOString(),
  }]);
  return issueTokens(uid, session!.id, config, 'Signed in');
}

/** What a refresh attempt led to: new tokens, or a refusal (after which the caller commits). */
export type RefreshOutcome = { tokens: SessionTokens } | { refused: 'unknown' | 'reused' | 'ended' };

/**
 * Rotates a refresh token (run elevated). The token is marked used by one conditional UPDATE, so
 * of two concurrent refreshes with the same token exactly one wins; the other counts as reuse and
 * revokes the family. A refusal is returned, not thrown, so the revocation commits.
 */
export async function refreshSession(refreshToken: unknown, config: SessionConfig): Promise<RefreshOutcome> {
  if (typeof refreshToken !== 'string' || !refreshToken.startsWith(REFRESH_TOKEN_PREFIX) || refreshToken.length > 100) {
    return { refused: 'unknown' };
  }
  const row = await rotateRefreshToken(hashToken(refreshToken));
  if (!row) return { refused: 'unknown' };
  if (row.was_used) {
    await revokeSession(row.session_id, 'refresh token reuse');
    return { refused: 'reused' };
  }
  if (!row.live) return { refused: 'ended' };
  return { tokens: await issueTokens(row.user_id, row.session_id, config, 'Session refreshed') };
}

/** Revokes a session: its access tokens and its whole refresh family are refused from now on. */
export async function revokeSession(sessionId: number, reason: string): Promise<void> {
  const meta = currentEnv().registry.meta('AuthSession');
  const open = await new QuerySet(meta).filter({ id: sessionId, revoked_at: null }).ids();
  if (open.length) await writeRecords(meta, open, { revoked_at: new Date().toISOString(), revoked_reason: reason });
}

/**
 * Every claim `issueTokens` writes must be there. jose checks `exp` only when present, so a token
 * without it (signed with a leaked key, or by a future bug) would never expire.
 */
const REQUIRED_CLAIMS = ['exp', 'iat', 'sub', 'db', 'sid'];

/** The claims of a valid access token for `dbName`, or null (bad signature, expired or without expiry, other database). */
export async function verifyAccessToken(token: string, dbName: string, secret: string): Promise<{ uid: number; sessionId: number } | null> {
  // Outside the try: a failed import is an error, not a refused token.
  const { jwtVerify } = jose.loaded ?? (await jose.load());
  try {
    const { payload } = await jwtVerify(token, tokenKey(secret), { algorithms: ['HS256'], requiredClaims: REQUIRED_CLAIMS });
    const uid = Number(payload.sub);
    const sessionId = payload.sid;
    if (payload.db !== dbName || !Number.isInteger(uid) || typeof sessionId !== 'number' || !Number.isInteger(sessionId)) return null;
    return { uid, sessionId };
  } catch {
    return null;
  }
}

/**
 * One statement, like `resolveApiKey`: the install flag and versions, and the session's user if
 * the session is open and the user active. Every column it decides on must be watched by the
 * credential version's triggers (`credential-version.ts`), which the request guard compares.
 */
export async function resolveSession(db: SqlExecutor, sessionId: number, uid: number): Promise<RequestState> {
  const row = await sessionState(db, sessionId, uid, guardsInstalled());
  return requestState(row, row && row.user_id !== null ? { uid: row.user_id, companyId: row.company_id, serviceAccountId: null, sessionId } : null);
}
