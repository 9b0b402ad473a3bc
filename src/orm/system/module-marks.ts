/**
 * The module marks of Settings > Modules (`module.pending`: `install` or `upgrade`) as a starting
 * server reads them, before it opens the database for work — most often to find none, so without
 * building a registry (`platform/pending-modules.ts`). The table is named as the core model
 * declares it.
 */
import type { SqlExecutor } from '../../db/sql-executor.js';
import { sql } from '../../db/sql-fragment.js';

export interface MarkedModule {
  identifier: string;
  state: string;
  pending: string;
}

/** Whether `module.pending` exists (a database whose core predates the marks has none). */
export async function hasPendingColumn(db: SqlExecutor): Promise<boolean> {
  const { rows: [column] } = await sql<{ present: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('public.module') AND attname = 'pending' AND NOT attisdropped) AS present`
    .execute(db);
  return column?.present === true;
}

/** Every marked module, by identifier. */
export async function markedModuleRows(db: SqlExecutor): Promise<MarkedModule[]> {
  const { rows } = await sql<MarkedModule>`
    SELECT identifier, state, pending FROM module WHERE pending IS NOT NULL ORDER BY identifier`.execute(db);
  return rows;
}

/** How many modules are marked. */
export async function markedModuleCount(db: SqlExecutor): Promise<number> {
  const { rows: [marked] } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM module WHERE pending IS NOT NULL`.execute(db);
  return marked?.n ?? 0;
}
