/**
 * The environment a piece of model code runs in — database, registry, transaction, user,
 * companies, context — carried by the async call chain (AsyncLocalStorage), so model code never
 * takes a connection argument: `await CurrencyRate.get_rate(…)` inside a method uses the
 * caller's database and transaction.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely } from 'kysely';
import type { RequestGuard } from '../auth/request-guard.js';
import type { TenantDatabase } from '../db/engine.js';
import { sqlState } from '../db/database-errors.js';
import { readPlatformState } from '../db/platform-state.js';
import { DatabaseBusy } from '../errors.js';
import type { AccessPolicy } from './access-policy.js';
import { flushAssignments } from './flush-assignments.js';
import { PendingWrites } from './pending-writes.js';
import { RecordChanges, type RecordChangeFeed } from './record-changes.js';
import type { FileService } from '../files/file-service.js';
import type { Bus } from '../realtime/bus.js';
import type { Registry } from './registry.js';

export interface Env {
  readonly db: TenantDatabase;
  readonly registry: Registry;
  /** The open transaction every statement of this unit of work runs in. */
  readonly trx: Kysely<any>;
  /** The acting user (`User` id), or null for the platform itself (install, CLI). */
  readonly uid: number | null;
  readonly companyId: number | null;
  readonly companyIds: readonly number[];
  readonly context: Readonly<Record<string, unknown>>;
  /** Elevated: access rules are not applied (install, CLI, server acting for a visitor). */
  readonly su: boolean;
  /** What the acting principal may do (`access-policy.ts`, compiled by `access/`); null = unrestricted (the platform). */
  readonly access: AccessPolicy | null;
  /** Work to run once the transaction has committed (deferred file removal, socket pings). */
  readonly afterCommit: (() => unknown)[];
  /** A remembered credential the database has yet to confirm (`request-guard.ts`); none otherwise. */
  readonly guard: RequestGuard | null;
  /** Field values assigned in model code, written before the next statement and before commit. */
  readonly pendingWrites: PendingWrites;
  /** The file storage of the platform running this unit of work (null: none, e.g. a bare test env). */
  readonly files: FileService | null;
  /** The realtime bus of the platform (socket pushes, `realtime/send.ts`); null: pushes go nowhere (install, CLI). */
  readonly bus: Bus | null;
  /** Where the records this unit of work changes are reported after commit (record-changed pings); null: nowhere. */
  readonly changeFeed: RecordChangeFeed | null;
  /** The records this unit of work changed directly, collected only while `changeFeed` says the database is watched. */
  readonly recordChanges: RecordChanges;
  /** The acting session (a person's request); null for an API key or the platform. */
  readonly sessionId: number | null;
}

const storage = new AsyncLocalStorage<Env>();

/** The environment of the current call chain; throws when model code runs outside one. */
export function currentEnv(): Env {
  const env = storage.getStore();
  if (!env) throw new Error('No FieldForge environment: model code must run inside runInEnv() / a request');
  return env;
}

export function hasEnv(): boolean {
  return storage.getStore() !== undefined;
}

/** Runs `fn` with `env` as the current environment. */
export function runInEnv<T>(env: Env, fn: () => Promise<T>): Promise<T> {
  return storage.run(env, fn);
}

/** Runs `fn` in a copy of the current environment with some members replaced (e.g. `{su: true}`). */
export function withEnv<T>(changes: Partial<Env>, fn: () => Promise<T>): Promise<T> {
  return storage.run({ ...currentEnv(), ...changes }, fn);
}

/** An environment over `trx` (a transaction, or the pool itself for read-only work). */
export function makeEnv(
  db: TenantDatabase,
  registry: Registry,
  trx: Kysely<any>,
  options: TransactionOptions,
  afterCommit: (() => unknown)[] = [],
): Env {
  return {
    db, registry, trx,
    uid: options.uid ?? null,
    companyId: options.companyId ?? null,
    companyIds: options.companyIds ?? (options.companyId ? [options.companyId] : []),
    context: options.context ?? {},
    su: options.su ?? false,
    access: options.access ?? null,
    afterCommit,
    guard: options.guard ?? null,
    pendingWrites: new PendingWrites(),
    files: options.files ?? null,
    bus: options.bus ?? null,
    changeFeed: options.changeFeed ?? null,
    recordChanges: new RecordChanges(),
    sessionId: options.sessionId ?? null,
  };
}

export interface TransactionOptions {
  uid?: number | null;
  companyId?: number | null;
  companyIds?: number[];
  context?: Record<string, unknown>;
  su?: boolean;
  access?: AccessPolicy | null;
  guard?: RequestGuard | null;
  files?: FileService | null;
  bus?: Bus | null;
  changeFeed?: RecordChangeFeed | null;
  sessionId?: number | null;
}

/**
 * Attempts of a unit of work that lost a deadlock or a serialization conflict, before the failure
 * goes to the caller (as Odoo retries a request on concurrency failures; the HTTP layer answers it
 * 503 with Retry-After). A lock timeout is not retried: the request already waited that long.
 */
const MAX_ATTEMPTS = 3;
const CONFLICTS = new Set(['40P01', '40001']); // deadlock_detected, serialization_failure

/**
 * Runs `fn` as one unit of work: a transaction that commits when `fn` resolves and rolls back when
 * it throws, so a failure never leaves anything half-written. After-commit work runs once the
 * commit succeeded and never delays the caller's result on failure.
 *
 * Chosen as the victim of a deadlock (or a serialization failure), the transaction was rolled
 * back whole, so `fn` runs again in a new one, up to `MAX_ATTEMPTS` in all, after a short random
 * pause (the other side finishes meanwhile). The new attempt starts as a new request would: a
 * remembered credential is confirmed again by its first statement, and without one a database
 * being installed refuses it (503).
 */
export async function transaction<T>(
  db: TenantDatabase,
  registry: Registry,
  options: TransactionOptions,
  fn: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const afterCommit: (() => unknown)[] = [];
    let result: T;
    try {
      result = await db.transaction((trx) => {
        const env = makeEnv(db, registry, trx, options, afterCommit);
        return runInEnv(env, async () => {
          const value = await fn();
          if (env.pendingWrites.size) await flushAssignments(env); // fields assigned after the last statement are written before the commit
          return value;
        });
      });
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !CONFLICTS.has(sqlState(err) ?? '')) throw err;
      await new Promise((resolve) => setTimeout(resolve, (20 + Math.random() * 80) * attempt));
      await beforeRetry(db, options);
      continue;
    }
    for (const job of afterCommit) {
      try {
        await job();
      } catch (err) {
        console.error('after-commit job failed', err);
      }
    }
    return result;
  }
}

async function beforeRetry(db: TenantDatabase, options: TransactionOptions): Promise<void> {
  if (options.guard) {
    options.guard.pending = true;
  } else if (!options.su && (await readPlatformState(db.kysely)).installing) {
    throw new DatabaseBusy(`Database '${db.name}' is installing or upgrading modules; retry shortly`);
  }
}
