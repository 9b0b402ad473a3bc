/**
 * Runs before every `/api/*` handler (and the signed-in `/auth/*` routes): selects the database
 * and resolves the credential — an API key, or a session token from the Authorization header or,
 * for browsers, the session cookie (then anything but a read needs the CSRF token). The full
 * resolution is one statement (install flag, registry and security versions, credential →
 * principal) plus the principal's access profile (two); mid-install → 503 with `Retry-After: 5`,
 * no valid credential → 401. Handlers run as the principal, restricted by its profile (`access/`).
 *
 * A route that does all its work through `readOnlyWork`/`unitOfWork` (declared with
 * `IN_UNIT_OF_WORK`) may instead start from what this worker remembers of the credential: the
 * database then confirms it within the request's first statement (`auth/request-guard.ts`), and
 * if it does not, the request is resolved again and re-run, so the answer is always the one the
 * full resolution would give.
 */
import type { FastifyRequest } from 'fastify';
import { compileAccessPolicy } from '../access/access-policy.js';
import { loadAccessProfile, narrowToScopes, type AccessProfile } from '../access/access-profile.js';
import { resolveApiKey, API_KEY_PREFIX, hashApiKey } from '../auth/api-keys.js';
import { CSRF_HEADER, csrfTokenMatches } from '../auth/csrf.js';
import { CredentialCache } from '../auth/credential-cache.js';
import { credentialGuard, StaleCredential, type Principal, type RequestGuard } from '../auth/request-guard.js';
import { hashToken, resolveSession, verifyAccessToken } from '../auth/sessions.js';
import type { TenantDatabase } from '../db/engine.js';
import type { FileService } from '../files/file-service.js';
import type { Bus } from '../realtime/bus.js';
import { AccessError, AuthenticationError, DatabaseBusy } from '../errors.js';
import { runInEnv } from '../orm/env.js';
import { makeEnv, transaction, type TransactionOptions } from '../orm/transaction.js';
import type { RecordChangeFeed } from '../orm/record-changes.js';
import { settleGuard } from '../orm/execute-sql.js';
import type { Registry } from '../orm/registry.js';
import type { Platform } from '../platform/platform.js';
import type { DatabaseSelector } from './database-selection.js';
import { SESSION_COOKIE } from './session-cookies.js';

export interface RequestContext {
  dbName: string;
  db: TenantDatabase;
  registry: Registry;
  /** The platform's file storage, handed to the request's units of work. */
  files: FileService;
  /** The platform's realtime bus, handed to the request's units of work (socket pushes). */
  bus: Bus;
  /** Where the request's units of work report the records they change (record-changed pings). */
  changeFeed: RecordChangeFeed;
  uid: number;
  companyId: number | null;
  /** What the principal may do (groups, rights, rules, allowed companies). */
  access: AccessProfile;
  /** Who the credential stands for (its session, or its API key's service account). */
  principal: Principal;
  /** The SHA-256 hash of the API key the request came with; null for a session. */
  keyHash: string | null;
  /** Set when the credential is remembered: the database has yet to confirm it. */
  guard: RequestGuard | null;
  /** The security version the credential and `access` were read at (confirmed by `guard` when set). */
  securityVersion: number;
  /** Resolves the credential again from the database (after the guard refused). */
  resolveAgain: () => Promise<RequestContext>;
}

declare module 'fastify' {
  interface FastifyRequest {
    ff?: RequestContext;
  }
  interface FastifyContextConfig {
    /**
     * Every statement of the handler runs in `readOnlyWork`/`unitOfWork`, or the route confirms
     * its credential before answering (`confirmCredential`): a remembered credential may be used.
     */
    unitOfWork?: boolean;
    /** A route outside `/api/` that still needs the credential resolved (`/auth/logout`, …). */
    authenticated?: boolean;
    /** The realtime socket: `?db=` chooses the database after the header (a browser cannot set headers on a WebSocket). */
    databaseFromQuery?: boolean;
  }
}

/** Route options of a handler whose work all runs in `readOnlyWork`/`unitOfWork`. */
export const IN_UNIT_OF_WORK = { config: { unitOfWork: true } } as const;

/** `Bearer <token68>`; the scheme is case-insensitive and may be followed by several spaces (RFC 7235 §2.1). */
const BEARER = /^bearer +([A-Za-z0-9_\-.~+/]+=*)$/i;
/** Methods that change nothing, which a cookie-authenticated request may use without CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function bearerToken(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (header === undefined) return null;
  const m = BEARER.exec(header);
  if (!m) throw new AuthenticationError('Malformed Authorization header: expected "Bearer <credential>"');
  return m[1]!;
}

export function apiContextHook(platform: Platform, selector: DatabaseSelector) {
  const remembered = new CredentialCache();
  return async (req: FastifyRequest): Promise<void> => {
    const selected = selector.select(req, { socket: req.routeOptions.config?.databaseFromQuery === true });
    const dbName = typeof selected === 'string' ? selected : await selected;
    const db = await platform.database(dbName);
    let token: string | null = null;
    let tokenError: unknown = null;
    try {
      token = bearerToken(req);
    } catch (err) {
      tokenError = err;
    }
    // An `ff_` key, or else a session token (a JWT whose signature, expiry and database are
    // checked here, in memory; the session itself is checked by the database).
    // Without an Authorization header, a browser's session cookie (never an API key).
    const cookie = token === null && tokenError === null ? req.cookies?.[SESSION_COOKIE] : undefined;
    if (cookie) token = cookie;
    const keyHash = !cookie && token?.startsWith(API_KEY_PREFIX) ? hashApiKey(token) : null;
    const claims = token && !keyHash ? await verifyAccessToken(token, dbName, platform.secret) : null;
    // A cookie is sent by the browser whoever asks: anything but a read needs the CSRF token too.
    if (cookie && claims && !SAFE_METHODS.has(req.method) && !csrfTokenMatches(platform.secret, claims.sessionId, req.headers[CSRF_HEADER])) {
      throw new AccessError('Missing or invalid CSRF token: send the ff_csrf cookie\'s value in X-CSRF-Token');
    }
    const rememberAs = keyHash ?? (claims ? hashToken(token!) : null);

    const resolve = async (): Promise<RequestContext> => {
      const state = claims ? await resolveSession(db.executor, claims.sessionId, claims.uid) : await resolveApiKey(db.executor, keyHash);
      if (state.installing) throw new DatabaseBusy(`Database '${dbName}' is installing or upgrading modules; retry shortly`);
      if (tokenError) throw tokenError;
      if (!token) throw new AuthenticationError('Missing credential: send "Authorization: Bearer <credential>"');
      if (!state.principal) throw new AuthenticationError('Invalid, revoked or expired credential');
      const registry = await platform.registry(dbName, state.registryVersion);
      const { uid, companyId, serviceAccountId } = state.principal;
      const access = narrowToScopes(await loadAccessProfile(db.executor, registry, { uid, serviceAccountId }), state.scopes);
      if (rememberAs && state.guardAvailable) {
        const { registryVersion, securityVersion, credentialVersion, expiresAt } = state;
        remembered.set(dbName, rememberAs, {
          principal: state.principal, versions: { registryVersion, securityVersion, credentialVersion, expiresAt }, access,
        });
      }
      return {
        dbName, db, registry, files: platform.files, bus: platform.bus, changeFeed: platform.changeFeed, uid, companyId, access, principal: state.principal, keyHash, guard: null,
        securityVersion: state.securityVersion, resolveAgain: resolve,
      };
    };

    const known = rememberAs && req.routeOptions.config?.unitOfWork ? remembered.get(dbName, rememberAs) : undefined;
    const registry = known && platform.loadedRegistry(dbName, known.versions.registryVersion);
    if (rememberAs && known && registry) {
      const { principal } = known;
      req.ff = {
        dbName, db, registry: await registry, files: platform.files, bus: platform.bus, changeFeed: platform.changeFeed, uid: principal.uid, companyId: principal.companyId,
        access: known.access, principal, keyHash,
        guard: credentialGuard(known.versions), securityVersion: known.versions.securityVersion,
        resolveAgain: () => {
          remembered.delete(dbName, rememberAs);
          return resolve();
        },
      };
      return;
    }
    req.ff = await resolve();
  };
}

function envOptions(ctx: RequestContext): TransactionOptions {
  return {
    uid: ctx.uid, companyId: ctx.companyId, companyIds: [...ctx.access.companyIds], access: compileAccessPolicy(ctx.access), guard: ctx.guard, files: ctx.files, bus: ctx.bus,
    changeFeed: ctx.changeFeed, sessionId: editingSession(ctx.principal), securityVersion: ctx.securityVersion,
  };
}

/** The session a person's request edits as (its sockets are not pinged about its writes); null for an API key. */
function editingSession(principal: Principal): number | null {
  return principal.serviceAccountId === null ? (principal.sessionId ?? null) : null;
}

/** Runs `fn` as the request's unit of work: one transaction, rolled back on any error. */
export function unitOfWork<T>(req: FastifyRequest, fn: () => Promise<T>): Promise<T> {
  return confirmed(req, (ctx) => transaction(ctx.db, ctx.registry, envOptions(ctx), fn));
}

/**
 * Runs a read-only handler without BEGIN/COMMIT: PostgreSQL's default READ COMMITTED gives each
 * statement its own snapshot even inside a transaction, so wrapping reads would cost two round
 * trips and buy no consistency. Nothing may be written here.
 */
export function readOnlyWork<T>(req: FastifyRequest, fn: () => Promise<T>): Promise<T> {
  return confirmed(req, (ctx) => {
    const env = makeEnv(ctx.db, ctx.registry, ctx.db.executor, envOptions(ctx));
    return runInEnv(env, async () => {
      const value = await fn();
      await env.work.flush(); // a field model code assigned while computing is not lost
      return value;
    });
  });
}

/**
 * Confirms the request's credential when the worker took it from memory (the request guard, on a
 * statement of its own): refused, it is resolved again — 401, 503 or a fresh context. For a
 * request that runs no statement of its own before answering (the realtime socket's upgrade).
 */
export function confirmCredential(req: FastifyRequest): Promise<void> {
  return confirmed(req, async () => undefined);
}

/**
 * Runs a read-only `fn` as the principal of a long-lived connection (the realtime socket), with
 * its credential and rights resolved afresh from the database: revoked since → `AuthenticationError`.
 */
export async function readAsNow<T>(ctx: Pick<RequestContext, 'resolveAgain'>, fn: () => Promise<T>): Promise<T> {
  const fresh = await ctx.resolveAgain();
  return runInEnv(makeEnv(fresh.db, fresh.registry, fresh.db.executor, envOptions(fresh)), fn);
}

/**
 * Runs `work` and lets its answer — a result or an error — out only once a remembered credential
 * is confirmed: by one of its statements, or else by a check of its own afterwards (outside the
 * transaction, which may have failed). Refused → resolved again (401, 503 or a fresh context) and,
 * if still valid, run again; the refused attempt wrote nothing, since no write runs before the
 * confirmation.
 */
async function confirmed<T>(req: FastifyRequest, work: (ctx: RequestContext) => Promise<T>): Promise<T> {
  const ctx = req.ff!;
  if (!ctx.guard) return work(ctx);
  let outcome: { value: T } | { error: unknown };
  try {
    outcome = { value: await work(ctx) };
  } catch (error) {
    outcome = { error };
  }
  let stale = 'error' in outcome && outcome.error instanceof StaleCredential;
  if (!stale && ctx.guard.pending) {
    try {
      await settleGuard(makeEnv(ctx.db, ctx.registry, ctx.db.executor, envOptions(ctx)));
    } catch (err) {
      if (!(err instanceof StaleCredential)) throw err;
      stale = true;
    }
  }
  if (stale) {
    req.ff = await ctx.resolveAgain();
    return work(req.ff);
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}
