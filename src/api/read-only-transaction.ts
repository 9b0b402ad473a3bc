/**
 * Work that must change nothing in the database whatever the model code it runs does: a form's
 * effects (`ui-effect`) run effect methods and compute methods of modules, and a setter or a
 * method that writes (`this.write(…)`, a queryset `update`) would otherwise write for real. The
 * database itself is the guard: the work runs in a transaction declared `READ ONLY`, where
 * PostgreSQL refuses every INSERT, UPDATE and DELETE — on the server and on PGlite alike — so a
 * write fails the call instead of happening. Called inside a unit of work that already has a
 * transaction, the work runs in a savepoint rolled back at the end instead (a transaction cannot
 * become read-only for a while and writable again). Either way nothing it queued stays — no
 * after-commit job, no assignment, no record change — and nothing is reported for record-changed
 * pings (no change feed): what it seemed to write never happened.
 */
import { sql } from '../db/sql-fragment.js';
import { currentEnv, withEnv } from '../orm/env.js';

export async function readOnlyTransaction<T>(fn: () => Promise<T>): Promise<T> {
  const env = currentEnv();
  const ports = { ...env.ports, changeFeed: null };
  if (env.work.inTransaction) return env.work.discarded(() => withEnv({ ports }, fn));
  return env.work.trx.transaction().execute(async (trx) => {
    // Sent directly, not through runSql: it reads no data, so the request guard rides on the
    // work's first SELECT as usual instead of costing a statement of its own.
    await sql`SET TRANSACTION READ ONLY`.execute(trx);
    // A unit of work of its own, never committed as such: its after-commit jobs and assignments are dropped.
    return withEnv({ work: env.work.over(trx), ports }, fn);
  });
}
