/**
 * The install window: how an install or upgrade takes a database away from its traffic and gives
 * it back, so that it succeeds every time however busy the database is, without ever queueing
 * all requests behind it for long.
 *
 * 1. One installer per database: a session-level advisory lock (`INSTALL_LOCK`), held on the
 *    installer's own connection from before the flag is raised until after it is lowered, so a
 *    second installer neither starts nor lowers the first one's flag.
 * 2. The `installing` flag, committed on its own: from then on every worker answers 503 (the full
 *    credential look-up reads it, the request guard refuses on it), so no new unit of work starts.
 * 3. The transactions that were already running when the flag was raised — their credential was
 *    confirmed before it — are waited for (bounded, `DRAIN_TIMEOUT_MS`), so they finish before the
 *    install takes its locks instead of deadlocking with it.
 * 4. The work: one transaction with its own timeouts (`SET LOCAL`: no statement timeout for the
 *    DDL and data load; a short lock timeout, so that a lock it cannot get soon does not hold every
 *    request queued behind its wait). A lock timeout, deadlock or serialization failure rolls the
 *    attempt back — leaving nothing, as any failure — and it is tried again after a growing pause,
 *    until `RETRY_DEADLINE_MS`.
 * 5. The flag is lowered (`finally`), then the lock released.
 *
 * On PGlite (one connection) the window holds that connection throughout, so requests simply wait
 * for it, as they waited for the install transaction before.
 */
import { sql } from '../db/sql-fragment.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { TenantDatabase } from '../db/engine.js';
import { sqlState } from '../db/database-errors.js';
import { ensurePlatformState, INSTALL_LOCK, setInstalling } from '../db/platform-state.js';

/**
 * Longest the installer waits for any one lock before it rolls back and tries again. Under
 * PostgreSQL's default `deadlock_timeout` (1 s): in a lock cycle with a request, the installer
 * gives way first, and the request goes on instead of failing as the deadlock's victim.
 */
export const INSTALL_LOCK_TIMEOUT_MS = 500;
/** Longest the installer waits for the transactions in flight when it raised the flag. */
export const DRAIN_TIMEOUT_MS = 10_000;
/** How long failed attempts are retried before the install gives up with the last failure. */
export const RETRY_DEADLINE_MS = 120_000;
/** How often the waits above look again. */
const POLL_MS = 25;
const ADVISORY_POLL_MS = 200;

/** SQLSTATEs after which the same install, tried again, can succeed. */
const RETRYABLE = new Set(['55P03', '40P01', '40001']); // lock_not_available, deadlock_detected, serialization_failure

/** Runs `work` in the install window of `db` (see above); `work` may run more than once, each time in a fresh transaction. */
export async function inInstallWindow<T>(db: TenantDatabase, work: (trx: SqlExecutor) => Promise<T>): Promise<T> {
  return db.executor.connection().execute(async (conn) => {
    await takeInstallLock(conn);
    try {
      await ensurePlatformState(conn);
      // The flag's row is also locked, briefly, by any request whose change moves the security
      // version: those waits are retried like the install's own, so the flag is always set and,
      // above all, always cleared.
      await retrying(() => setInstalling(conn, true));
      try {
        await drainInFlight(conn);
        return await retrying(() => conn.transaction().execute(async (trx) => {
          // SET LOCAL: this transaction only, whatever the pool's request timeouts are.
          await sql`SELECT set_config('lock_timeout', ${`${INSTALL_LOCK_TIMEOUT_MS}ms`}, true), set_config('statement_timeout', '0', true)`.execute(trx);
          return work(trx);
        }));
      } finally {
        await retrying(() => setInstalling(conn, false));
      }
    } finally {
      // Fails only with the connection gone, and the session's lock with it.
      await sql`SELECT pg_advisory_unlock(${INSTALL_LOCK})`.execute(conn).catch(() => {});
    }
  });
}

/** Polls rather than blocks, so the wait for another installer is not cut short by the pool's lock timeout. */
async function takeInstallLock(conn: SqlExecutor): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ taken: boolean }>`SELECT pg_try_advisory_lock(${INSTALL_LOCK}) AS taken`.execute(conn);
    if (rows[0]?.taken) return;
    await sleep(ADVISORY_POLL_MS);
  }
}

/**
 * Waits until no other client session of the database is in a transaction that started before the
 * flag was committed (autocommit statements included), or `DRAIN_TIMEOUT_MS` passed. Those
 * transactions passed their credential check before the flag; anything that starts later sees it.
 */
async function drainInFlight(conn: SqlExecutor): Promise<void> {
  const { rows: [mark] } = await sql<{ since: string }>`SELECT clock_timestamp()::text AS since`.execute(conn);
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const { rows: [running] } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
        AND xact_start < ${mark!.since}::timestamptz`.execute(conn);
    if (!running?.n || Date.now() >= deadline) return;
    await sleep(POLL_MS);
  }
}

/** Runs `attempt` until it succeeds, fails otherwise than by a lock conflict, or `RETRY_DEADLINE_MS` passed. */
async function retrying<T>(attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RETRY_DEADLINE_MS;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isRetryable(err) || Date.now() >= deadline) throw err;
      // 100 ms, 200 ms, … 2 s, ± half: concurrent work gets room, retries do not fall in step.
      await sleep(Math.min(2000, 100 * 2 ** (n - 1)) * (0.5 + Math.random()));
    }
  }
}

/** True for a lock timeout, deadlock or serialization failure, also when wrapped (`cause`). */
function isRetryable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = sqlState(e);
    if (code && RETRYABLE.has(code)) return true;
  }
  return false;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
