/**
 * Starting a unit of work: the environment of a principal over a transaction (or the pool, for
 * read-only work), and `transaction()`, which commits or rolls back as a whole and retries a lost
 * deadlock. Apart from `env.ts` (which only holds the current environment) because a unit of work
 * is given the write path (`flush-assignments.ts`) that itself runs in an environment.
 */
import type { SqlExecutor } from '../db/sql-executor.js';
import type { TenantDatabase } from '../db/engine.js';
import { sqlState } from '../db/database-errors.js';
import { readPlatformState } from '../db/platform-state.js';
import { DatabaseBusy } from '../errors.js';
import type { AccessPolicy } from './access-policy.js';
import { runInEnv, type Env } from './env.js';
import { flushPending } from './flush-assignments.js';
import type { BusPort, FileStorePort, RequestGuardPort } from './ports.js';
import type { RecordChangeFeed } from './record-changes.js';
import type { Registry } from './registry.js';
import { UnitOfWork } from './unit-of-work.js';
import { RECORD_WRITES } from './write/record-writes.js';

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
    securityVersion: options.securityVersion ?? null,
    work: new UnitOfWork(trx, flushPending, RECORD_WRITES),
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
  securityVersion?: number | null;
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
  } else if (!options.su && (await readPlatformState(db.executor)).installing) {
    throw new DatabaseBusy(`Database '${db.name}' is installing or upgrading modules; retry shortly`);
  }
}
