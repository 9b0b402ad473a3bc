/**
 * The table locks an install takes, all at once and in one fixed order, before its first schema
 * change. Taken one by one as the statements come (a SHARE lock for an index, later an ACCESS
 * EXCLUSIVE one for a trigger on the same table), they deadlock with requests: the upgrade holds
 * the weaker lock and waits for a request's, while the request waits for the upgrade's — exactly
 * what issue 10 measured between `DROP TRIGGER … ON api_key` and the credential check's `UPDATE
 * api_key`. Taking each table's strongest lock first, in one order, means an install never
 * upgrades a lock it holds, and never waits on a table while holding one a request needs first.
 *
 * The order: every other table by name, then the tables the full credential look-ups read, in the
 * order they read them (`ff_state`, `api_key`, `service_account`; `auth_session`, `user`). A
 * request's look-up locks the credential tables before its own statements lock their tables;
 * locking those last means the install never holds a credential table while it waits for a
 * request's table. What no order can rule out (two statements joining the same tables in
 * opposite orders) the installer's short lock timeout and retry settle.
 */
import { sql } from './sql-fragment.js';
import type { SqlExecutor } from './sql-executor.js';

/** The modes an install needs: ACCESS EXCLUSIVE to alter a table, SHARE ROW EXCLUSIVE to reference it from a new key or add a trigger. */
export type TableLockMode = 'ACCESS EXCLUSIVE' | 'SHARE ROW EXCLUSIVE';

const STRENGTH: Record<TableLockMode, number> = { 'SHARE ROW EXCLUSIVE': 1, 'ACCESS EXCLUSIVE': 2 };

/** Adds `mode` on `table` to `locks`, keeping the stronger of two. */
export function needLock(locks: Map<string, TableLockMode>, table: string, mode: TableLockMode): void {
  const held = locks.get(table);
  if (!held || STRENGTH[mode] > STRENGTH[held]) locks.set(table, mode);
}

/** Merges lock sets, each table at the strongest mode any of them needs. */
export function mergeLocks(...sets: ReadonlyMap<string, TableLockMode>[]): Map<string, TableLockMode> {
  const merged = new Map<string, TableLockMode>();
  for (const set of sets) for (const [table, mode] of set) needLock(merged, table, mode);
  return merged;
}

/** The tables of `locks` in locking order: others by name, then `last` in its own order. */
export function lockOrder(locks: ReadonlyMap<string, TableLockMode>, last: readonly string[]): string[] {
  const tail = last.filter((t) => locks.has(t));
  const head = [...locks.keys()].filter((t) => !last.includes(t)).sort();
  return [...head, ...tail];
}

/** Takes every lock of `locks` in `lockOrder`; nothing at all when `locks` is empty. */
export async function lockTables(db: SqlExecutor, locks: ReadonlyMap<string, TableLockMode>, last: readonly string[]): Promise<void> {
  for (const table of lockOrder(locks, last)) {
    await sql`LOCK TABLE ${sql.table(table)} IN ${sql.raw(locks.get(table)!)} MODE`.execute(db);
  }
}
