/**
 * `storeContent` for many contents at once (a module's data files attach hundreds of files): the
 * same protocol — each content decoded, hashed and written once under the database's content
 * address, its key's shared lock held until the transaction ends, fresh bytes handed to the
 * sweep — with one lock statement for all the keys and one sweep for all the fresh bytes, rather
 * than one of each per file.
 */
import { sql } from '../db/sql-fragment.js';
import { currentEnv } from '../orm/env.js';
import { decodeBase64 } from '../orm/base64-content.js';
import { sha256, storageKey } from './content-address.js';
import { currentFiles } from './file-service.js';
import { LOCK_SPACE, noteFreshKey, sweepSoon } from './file-removal.js';
import type { StoredContent } from './stored-content.js';

/** Writes to the store in flight at once (the writes, not the database, dominate). */
const CONCURRENT_WRITES = 32;

/** The stored form of each content, in order. */
export async function storeContents(contents: readonly unknown[]): Promise<StoredContent[]> {
  const env = currentEnv();
  const files = currentFiles(env);
  const { store, uploadLimit } = files;
  const decoded = contents.map((content) => {
    const { bytes, mimetype } = decodeBase64(content, uploadLimit);
    const checksum = sha256(bytes);
    return { bytes, stored: { checksum, filepath: storageKey(env.db.name, checksum), file_size: bytes.length, mimetype } };
  });
  const keys = [...new Set(decoded.map((d) => d.stored.filepath))].sort();
  if (!keys.length) return [];
  await sql`SELECT pg_advisory_xact_lock_shared(${LOCK_SPACE}::int, hashtext(k)) FROM unnest(${keys}::text[]) AS k`.execute(env.work.trx);
  const unique = [...new Map(decoded.map((d) => [d.stored.filepath, d])).values()];
  let fresh = false;
  let failure: unknown;
  for (let i = 0; i < unique.length && failure === undefined; i += CONCURRENT_WRITES) {
    const batch = unique.slice(i, i + CONCURRENT_WRITES);
    const written = await Promise.allSettled(batch.map((d) => store.put(d.stored.filepath, d.bytes)));
    // Every write that landed is handed to the sweep, also when another one failed: the
    // transaction is about to roll back, and those bytes must not stay behind.
    batch.forEach((d, j) => {
      const outcome = written[j]!;
      if (outcome.status === 'rejected') failure ??= outcome.reason;
      else if (outcome.value) {
        noteFreshKey(env.db.name, d.stored.filepath);
        fresh = true;
      }
    });
  }
  if (fresh) sweepSoon(env.db, files);
  if (failure !== undefined) throw failure;
  return decoded.map((d) => d.stored);
}
