/**
 * Releases storage keys rows stop using (an attachment deleted, or its content replaced): a key of
 * this database that no remaining row uses is queued in the current transaction, and the sweep is
 * scheduled for after the commit (`UnitOfWork.afterCommit`: a savepoint rolled back takes its
 * queue entries and its sweep with it). Each key's exclusive lock is taken first (in key order, so
 * two transactions cannot deadlock), so of two transactions deleting the last two rows of a key
 * the second sees the first's delete and queues it. Inherited keys (another database's prefix, a
 * clone) are never queued: only their owner removes them (file-removal.ts).
 */
import { sql } from '../db/sql-fragment.js';
import { currentEnv } from '../orm/env.js';
import { keysStillUsed, storedKeysOf } from '../orm/system/attachment-store.js';
import { isStorageKey, keyOwner } from './content-address.js';
import { LOCK_SPACE, queueRemoval, sweepSoon } from './file-removal.js';
import type { FileService } from './file-service.js';

/** `keys` lose the rows `leavingIds` (those rows are being deleted or rewritten); `files` sweeps them. */
export async function releaseKeys(keys: readonly string[], leavingIds: readonly number[], files: FileService): Promise<void> {
  const env = currentEnv();
  const own = [...new Set(keys)].filter((k) => isStorageKey(k) && keyOwner(k) === env.db.name).sort();
  if (!own.length) return;
  for (const key of own) await sql`SELECT pg_advisory_xact_lock(${LOCK_SPACE}::int, hashtext(${key}))`.execute(env.work.trx);
  const stillUsed = await keysStillUsed(env.work.trx, own, leavingIds);
  const released = own.filter((k) => !stillUsed.has(k));
  if (!released.length) return;
  await queueRemoval(env.work.trx, released);
  const db = env.db;
  env.work.afterCommit(() => sweepSoon(db, files));
}

/** Releases the keys of attachments `ids`, which are about to be deleted (`FileService.releaseAttachments`). */
export async function releaseDeletedAttachments(ids: readonly number[], files: FileService): Promise<void> {
  if (!ids.length) return;
  const env = currentEnv();
  await releaseKeys(await storedKeysOf(env.work.trx, ids), ids, files);
}
