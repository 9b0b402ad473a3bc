/**
 * Deferred removal of stored bytes (spec §2.4.2) and the sweep that performs it.
 *
 * - Deleting the last row of a key queues the key in `ff_attachment_removal` inside the deleting
 *   transaction: a rolled-back delete queues nothing and never touches bytes.
 * - The sweep runs by itself after the commit (and `fieldforge files sweep -db NAME`). Per key it
 *   takes an exclusive advisory lock; an upload holds the shared lock of its key from writing the
 *   bytes until its transaction ends, so the sweep's re-check of references ("does a row use this
 *   key?") sees every upload of the same bytes either committed or not started: a concurrent upload
 *   is never left pointing at removed bytes. A key whose lock is busy stays queued.
 * - Bytes an upload wrote for a transaction that then rolled back have no row and no queue entry;
 *   the upload notes them as fresh (`noteFreshKey`) and every sweep checks them the same way once
 *   the lock is free.
 *
 * Clones (spec §2.4.3). A clone keeps its source's rows, whose `filepath` names the source
 * (`<source>/…`), and reads the key from the row. Two rules keep both sides intact:
 * 1. Only the database whose name prefixes a key ever removes its bytes; deleting an inherited
 *    row in a clone removes the row and queues nothing.
 * 2. Before a clone is made, `recordClone` leaves a marker `<prefix>/.clones/<clone>` in the store
 *    for the source and every database whose keys the source references. A sweep removing
 *    `<self>/…` bytes first asks each clone named under `<self>/.clones/` whether it still has a row
 *    with that key (so only the own clones are consulted, never every database). A key a clone
 *    still uses stays queued and is re-checked by later sweeps; a clone that no longer exists
 *    (dropped) loses its marker once the marker is older than a grace period (the marker is
 *    written before the copy starts); a clone that cannot be checked keeps the bytes.
 */
import { sql } from '../db/sql-fragment.js';
import type { TenantDatabase } from '../db/engine.js';
import { keyInUse, keyOwners } from '../orm/system/attachment-store.js';
import { forgetQueued, queuedKeys } from '../orm/system/removal-queue.js';
import { isStorageKey, keyOwner } from './content-address.js';
import type { FileService } from './file-service.js';

// Queued inside the deleting transaction (`release-keys.ts`); the queue's rows are the ORM's.
export { queueRemoval } from '../orm/system/removal-queue.js';
/** First half of the advisory lock id of a key (the second is `hashtext(key)`). */
export const LOCK_SPACE = 0x0ff1;
const CLONES = '.clones/';
/** A marker whose database does not exist is kept this long (the clone may still be copying). */
const MARKER_GRACE_MS = 60 * 60 * 1000;

export interface SweepResult {
  /** Keys whose bytes were removed. */
  removed: string[];
  /** Keys left for a later sweep (lock busy, or a clone still uses them). */
  kept: string[];
}

/**
 * Keys an upload wrote fresh, per database, until a sweep finds them used or removes them: a
 * transaction that rolls back leaves such bytes with no row and no queue entry. Kept in memory
 * (a crash in between leaves unreferenced bytes, never missing ones).
 */
const freshKeys = new Map<string, Set<string>>();

export function noteFreshKey(dbName: string, key: string): void {
  (freshKeys.get(dbName) ?? freshKeys.set(dbName, new Set()).get(dbName)!).add(key);
}

/** Sweeps of one database in this process run one after the other (the explicit one waits for a background one). */
const running = new Map<string, Promise<unknown>>();

/** Removes the queued (and freshly written) keys nothing references any more. */
export function sweep(db: TenantDatabase, files: FileService): Promise<SweepResult> {
  const previous = running.get(db.name) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => sweepNow(db, files));
  running.set(db.name, next);
  void next.finally(() => {
    if (running.get(db.name) === next) running.delete(db.name);
  }).catch(() => undefined);
  return next;
}

async function sweepNow(db: TenantDatabase, files: FileService): Promise<SweepResult> {
  const queued = await queuedKeys(db.executor);
  const fresh = freshKeys.get(db.name) ?? new Set<string>();
  const keys = [...new Set([...queued, ...fresh])];
  const result: SweepResult = { removed: [], kept: [] };
  if (!keys.length) return result;
  const { store } = files;
  const clones = await cloneMarkers(files, db.name);
  for (const key of keys) {
    const outcome = await db.executor.transaction().execute(async (trx) => {
      // Never ours to remove (an inherited key, or garbage): forget it.
      if (!isStorageKey(key) || keyOwner(key) !== db.name) return 'forget';
      const locked = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${LOCK_SPACE}::int, hashtext(${key})) AS ok`.execute(trx);
      if (!locked.rows[0]?.ok) return 'keep';
      if (await keyInUse(trx, key)) return 'forget';
      if (await usedByClone(files, clones, key)) return 'keep';
      await store.remove(key);
      await forgetQueued(trx, key);
      return 'removed';
    });
    if (outcome !== 'keep') fresh.delete(key);
    if (outcome === 'forget') await forgetQueued(db.executor, key);
    if (outcome === 'removed') result.removed.push(key);
    if (outcome === 'keep') result.kept.push(key);
  }
  return result;
}

const RETRIES = [0, 200, 1000, 3000, 10_000];

/**
 * Runs the sweep in the background after a commit (or after an upload wrote fresh bytes),
 * retrying while keys are locked by transactions still running. Failures are logged, never
 * thrown: the keys stay queued for the next sweep.
 */
export function sweepSoon(db: TenantDatabase, files: FileService): void {
  const attempt = (i: number): void => {
    const timer = setTimeout(() => {
      sweep(db, files).then((r) => {
        if (r.kept.length && i + 1 < RETRIES.length) attempt(i + 1);
      }, (err) => {
        if (process.env.FF_DEV === '1') console.warn(`file sweep of '${db.name}' failed: ${(err as Error).message}`);
      });
    }, RETRIES[i]);
    timer.unref();
  };
  attempt(0);
}

/**
 * Marks that `target` is about to become a clone of `source`: call before copying the database.
 * `prefixes` are the key owners the source's rows reference (itself and its own sources).
 */
export async function recordClone(source: TenantDatabase, target: string, files: FileService): Promise<void> {
  const { store } = files;
  const prefixes = new Set([source.name, ...(await keyOwners(source.executor))]);
  const marker = Buffer.from(JSON.stringify({ source: source.name, clone: target, at: new Date().toISOString() }));
  for (const prefix of prefixes) {
    await store.remove(`${prefix}/${CLONES}${target}`);
    await store.put(`${prefix}/${CLONES}${target}`, marker);
  }
}

interface CloneMarker {
  name: string;
  key: string;
}

async function cloneMarkers(files: FileService, dbName: string): Promise<CloneMarker[]> {
  const { store } = files;
  const keys = await store.list(`${dbName}/${CLONES}`);
  return keys.map((key) => ({ key, name: key.slice(key.lastIndexOf('/') + 1) }));
}

/** Whether some clone may still reference `key` (true when one cannot be asked). */
async function usedByClone(files: FileService, clones: CloneMarker[], key: string): Promise<boolean> {
  const { store, openDatabase } = files;
  for (const clone of clones) {
    if (!openDatabase) return true;
    try {
      const db = await openDatabase(clone.name);
      if (!db) {
        const stat = await store.stat(clone.key);
        if (stat && Date.now() - stat.modified.getTime() < MARKER_GRACE_MS) return true;
        await store.remove(clone.key);
        continue;
      }
      if (await keyInUse(db.executor, key)) return true;
    } catch {
      return true;
    }
  }
  return false;
}
