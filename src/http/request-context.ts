/**
 * Runs before every `/api/*` handler: selects the database, then in one statement reads its
 * install flag and registry version and resolves the credential. Mid-install → 503 with
 * `Retry-After: 5`; no valid credential → 401. Handlers then run as one unit of work (a
 * transaction) as the credential's user.
 */
import type { FastifyRequest } from 'fastify';
import { AuthenticationError, DatabaseBusy } from '../errors.js';
import { resolveApiKey, API_KEY_PREFIX } from '../auth/api-keys.js';
import type { TenantDatabase } from '../db/engine.js';
import { makeEnv, runInEnv, transaction } from '../orm/env.js';
import type { Registry } from '../orm/registry.js';
import type { Platform } from '../platform/platform.js';
import type { DatabaseSelector } from './database-selection.js';

export interface RequestContext {
  dbName: string;
  db: TenantDatabase;
  registry: Registry;
  uid: number;
  companyId: number | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    ff?: RequestContext;
  }
}

const BEARER = /^Bearer ([A-Za-z0-9_\-.~+/]+=*)$/;

export function bearerToken(req: FastifyRequest): string | null {
  const header = req.headers.authorization;
  if (header === undefined) return null;
  const m = BEARER.exec(header);
  if (!m) throw new AuthenticationError('Malformed Authorization header: expected "Bearer <credential>"');
  return m[1]!;
}

export function apiContextHook(platform: Platform, selector: DatabaseSelector) {
  return async (req: FastifyRequest): Promise<void> => {
    const dbName = await selector.select(req);
    const db = await platform.database(dbName);
    let token: string | null = null;
    let tokenError: unknown = null;
    try {
      token = bearerToken(req);
    } catch (err) {
      tokenError = err;
    }
    const state = await resolveApiKey(db.kysely, token?.startsWith(API_KEY_PREFIX) ? token : null);
    if (state.installing) throw new DatabaseBusy(`Database '${dbName}' is installing or upgrading modules; retry shortly`);
    if (tokenError) throw tokenError;
    if (!token) throw new AuthenticationError('Missing credential: send "Authorization: Bearer <credential>"');
    if (!state.principal) throw new AuthenticationError('Invalid, revoked or expired credential');
    const registry = await platform.registry(dbName, state.registryVersion);
    req.ff = { dbName, db, registry, uid: state.principal.uid, companyId: state.principal.companyId };
  };
}

/** Runs `fn` as the request's unit of work: one transaction, rolled back on any error. */
export function unitOfWork<T>(req: FastifyRequest, fn: () => Promise<T>): Promise<T> {
  const ctx = req.ff!;
  return transaction(ctx.db, ctx.registry, { uid: ctx.uid, companyId: ctx.companyId }, fn);
}

/**
 * Runs a read-only handler without BEGIN/COMMIT: PostgreSQL's default READ COMMITTED gives each
 * statement its own snapshot even inside a transaction, so wrapping reads would cost two round
 * trips and buy no consistency. Nothing may be written here.
 */
export function readOnlyWork<T>(req: FastifyRequest, fn: () => Promise<T>): Promise<T> {
  const ctx = req.ff!;
  return runInEnv(makeEnv(ctx.db, ctx.registry, ctx.db.kysely, { uid: ctx.uid, companyId: ctx.companyId }), fn);
}
