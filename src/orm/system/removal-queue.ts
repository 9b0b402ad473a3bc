/**
 * The queue of storage keys whose bytes may be removed (`files/file-removal.ts`): a key is queued
 * by the transaction that deleted its last row and forgotten by the sweep once the bytes are gone
 * or found used again. The sweep runs on a database's pool, without a registry, so the table is
 * named here, and the model (`AttachmentRemoval`) declares it from here.
 */
import type { SqlExecutor } from '../../db/sql-executor.js';
import { sql } from '../../db/sql-fragment.js';

export const REMOVAL_TABLE = 'ff_attachment_removal';

/** Queues `keys` in `trx` (the transaction that deleted their rows), for removal once it commits. */
export async function queueRemoval(trx: SqlExecutor, keys: readonly string[]): Promise<void> {
  if (!keys.length) return;
  await sql`INSERT INTO ${sql.table(REMOVAL_TABLE)} (key, created_date) SELECT k, now() FROM unnest(${[...keys]}::text[]) AS k`.execute(trx);
}

/** The first 10,000 queued keys, in key order, each once (a sweep's batch; the rest wait for the next). */
export async function queuedKeys(db: SqlExecutor): Promise<string[]> {
  const { rows } = await sql<{ key: string }>`SELECT DISTINCT key FROM ${sql.table(REMOVAL_TABLE)} ORDER BY key LIMIT 10000`.execute(db);
  return rows.map((r) => r.key);
}

/** Takes `key` off the queue (every entry of it). */
export async function forgetQueued(db: SqlExecutor, key: string): Promise<void> {
  await sql`DELETE FROM ${sql.table(REMOVAL_TABLE)} WHERE key = ${key}`.execute(db);
}
