/**
 * Work that may fail without failing the import: it runs in a savepoint of the request's
 * transaction, rolled back on failure so nothing of it stays (a record is whole, with its lines,
 * or absent). Field assignments model code makes while it runs are kept apart and flushed before
 * the savepoint is released, so a failed attempt leaves none behind either — nor any record
 * change it reported for record-changed pings (`orm/record-changes.ts`).
 */
import { sql } from '../../db/sql-fragment.js';
import { FieldForgeError } from '../../errors.js';
import { currentEnv, withEnv } from '../../orm/env.js';
import { flushAssignments } from '../../orm/flush-assignments.js';
import { PendingWrites } from '../../orm/pending-writes.js';

export type Attempt<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: FieldForgeError };

/**
 * Runs `fn` in savepoint `name`. A refusal (a `FieldForgeError` other than a 5xx) is rolled back and
 * answered; anything else — a bug, a lost connection, a lock timeout — still fails the request.
 */
export async function inSavepoint<T>(name: string, fn: () => Promise<T>): Promise<Attempt<T>> {
  const { trx, recordChanges } = currentEnv();
  const reported = recordChanges.mark();
  await sql`SAVEPOINT ${sql.id(name)}`.execute(trx);
  try {
    const value = await withEnv({ pendingWrites: new PendingWrites() }, async () => {
      const v = await fn();
      await flushAssignments();
      return v;
    });
    await sql`RELEASE SAVEPOINT ${sql.id(name)}`.execute(trx);
    return { ok: true, value };
  } catch (error) {
    await sql`ROLLBACK TO SAVEPOINT ${sql.id(name)}`.execute(trx);
    await sql`RELEASE SAVEPOINT ${sql.id(name)}`.execute(trx);
    recordChanges.restore(reported);
    if (error instanceof FieldForgeError && error.status < 500) return { ok: false, error };
    throw error;
  }
}

/** Runs `fn` in savepoint `name` and undoes all it wrote, whatever happens (a dry run). */
export async function rolledBack<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const { trx, recordChanges } = currentEnv();
  const reported = recordChanges.mark();
  await sql`SAVEPOINT ${sql.id(name)}`.execute(trx);
  try {
    return await fn();
  } finally {
    await sql`ROLLBACK TO SAVEPOINT ${sql.id(name)}`.execute(trx);
    await sql`RELEASE SAVEPOINT ${sql.id(name)}`.execute(trx);
    recordChanges.restore(reported);
  }
}

/** Runs `fn` in savepoint `name` and keeps what it wrote only when `keep()` says so afterwards (atomic mode). */
export async function provisional<T>(name: string, fn: () => Promise<T>, keep: () => boolean): Promise<T> {
  const { trx, recordChanges } = currentEnv();
  const reported = recordChanges.mark();
  await sql`SAVEPOINT ${sql.id(name)}`.execute(trx);
  let kept = false;
  try {
    const value = await fn();
    kept = keep();
    return value;
  } finally {
    if (!kept) await sql`ROLLBACK TO SAVEPOINT ${sql.id(name)}`.execute(trx);
    await sql`RELEASE SAVEPOINT ${sql.id(name)}`.execute(trx);
    if (!kept) recordChanges.restore(reported);
  }
}
