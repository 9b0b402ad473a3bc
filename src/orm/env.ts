/**
 * The environment a piece of model code runs in — database, registry, user, companies, context,
 * its unit of work (`unit-of-work.ts`: transaction, savepoints, after-commit jobs) and the ports
 * the layers above provide (`ports.ts`) — carried by the async call chain (AsyncLocalStorage), so
 * model code never takes a connection argument: `await CurrencyRate.get_rate(…)` inside a method
 * uses the caller's database and transaction.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { TenantDatabase } from '../db/engine.js';
import { sqlState } from '../db/database-errors.js';
import { readPlatformState } from '../db/platform-state.js';
import { DatabaseBusy } from '../errors.js';
import type { AccessPolicy } from './access-policy.js';
import { flushPending } from './flush-assignments.js';
import type { BusPort, EnvPorts, FileStorePort, RequestGuardPort } from './ports.js';
import type { RecordChangeFeed } from './record-changes.js';
import type { Registry } from './registry.js';
import { UnitOfWork } from './unit-of-work.js';

/**
 * Who acts (the principal), in which database, through which unit of work, with which ports.
 * A copy made by `withEnv` (elevated, another context) shares the unit of work of the original.
 */
export interface Env {
  readonly db: TenantDatabase;
  readonly registry: Registry;
  /** The acting user (`User` id), or null for the platform itself (install, CLI). */
  readonly uid: number | null;
  readonly companyId: number | null;
  readonly companyIds: readonly number[];
  readonly context: Readonly<Record<string, unknown>>;
  /** Elevated: access rules are not applied (install, CLI, server acting for a visitor). */
  readonly su: boolean;
  /** What the acting principal may do (`access-policy.ts`, compiled by `access/`); null = unrestricted (the platform). */
  readonly access: AccessPolicy | null;
  /** The acting session (a person's request); null for an API key or the platform. */
  readonly sessionId: number | null;
  /** The transaction, its savepoints, after-commit jobs, pending assignments and record changes. */
  readonly work: UnitOfWork;
  /** What the unit of work reaches above the ORM: bus, file storage, change feed, request guard. */
  readonly ports: EnvPorts;
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

/** An environment over `trx` (a transaction, or the pool itself for read-only work), with a unit of work of its own. */
export function makeEnv(db: TenantDatabase, registry: Registry, trx: SqlExecutor, options: TransactionOptions): Env {
  return {
    db, registry,
    uid: options.uid ?? null,
    companyId: options.companyId ?? null,
    companyIds: options.companyIds ?? (options.companyId ? [options.companyId] : []),
    context: options.context ?? {},
    su: options.su ?? false,
    access: options.access ?? null,
    sessionId: options.sessionId ?? null,
    work: new UnitOfWork(trx, flushPending),
    ports: { bus: options.bus ?? null, files: options.files ?? null, changeFeed: options.changeFeed ?? null, guard: options.guard ?? null },
  };
}

/** How to start a unit of work: the principal, and the ports the layers above provide. */
export interface TransactionOptions {
  uid?: number | null;
  companyId?: number | null;
  companyIds?: number[];
  context?: Record<string, unknown>;
  su?: boolean;
  access?: AccessPolicy | null;
  guard?: RequestGuardPort | null;
  files?: FileStorePort | null;
  bus?: BusPort | null;
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
    let work: UnitOfWork | undefined;
    let result: T;
    try {
      result = await db.transaction((trx) => {
        const env = makeEnv(db, registry, trx, options);
        work = env.work;
        return runInEnv(env, async () => {
          const value = await fn();
          await env.work.flush(); // fields assigned after the last statement are written before the commit
          return value;
        });
      });
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !CONFLICTS.has(sqlState(err) ?? '')) throw err;
      await new Promise((resolve) => setTimeout(resolve, (20 + Math.random() * 80) * attempt));
      await beforeRetry(db, options);
      continue;
    }
    await work!.committed();
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
