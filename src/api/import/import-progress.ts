/**
 * Progress of running imports (`progress_id`, CONTRACTS C3): `{done, total}` records, updated as
 * each batch completes, read back by `GET /api/import-progress/{progress_id}` by the user who
 * started the import only (another user gets the same 404 as an unknown id).
 *
 * Each change is also pushed at once — not after commit: the import's transaction is still
 * running — through the environment's bus port (`orm/ports.ts`) to the importing user's sockets
 * on every worker as `{type: 'realtime_data', data: {event: 'import_progress', progress_id, model,
 * done, total}}` (CONTRACTS C4), which is how a
 * multi-worker deployment follows an import. The polled answer is kept in this worker's memory: a
 * poll reaching another worker sees nothing (404). Entries expire an hour after
 * their last change, and the store holds at most `MAX_ENTRIES` (the oldest go first), so polling
 * clients cannot grow it without bound.
 */
import { currentEnv } from '../../orm/env.js';

/** An import with a progress id reports at least every this many records (CONTRACTS C4). */
export const PROGRESS_EVERY = 1_000;

export interface ImportProgress {
  done: number;
  total: number;
}

const TTL_MS = 60 * 60 * 1000;
const MAX_ENTRIES = 10_000;

interface Entry {
  progress: ImportProgress;
  touched: number;
}

/** Whose progress this is: the database and the principal (user and API key's service account). */
export interface ProgressOwner {
  readonly dbName: string;
  readonly uid: number;
  readonly serviceAccountId: number | null;
}

const entries = new Map<string, Entry>();

function key(owner: ProgressOwner, progressId: string): string {
  return JSON.stringify([owner.dbName, owner.uid, owner.serviceAccountId, progressId]);
}

function sweep(now: number): void {
  for (const [k, e] of entries) {
    if (now - e.touched <= TTL_MS && entries.size <= MAX_ENTRIES) break; // Map order is insertion order: oldest first
    entries.delete(k);
  }
}

/** Records `done` of `total` for `progressId` (a newer import under the same id replaces it). */
export function setProgress(owner: ProgressOwner, progressId: string, progress: ImportProgress): void {
  const k = key(owner, progressId);
  const now = Date.now();
  entries.delete(k); // re-inserted last: the Map stays ordered by last change
  entries.set(k, { progress: { ...progress }, touched: now });
  sweep(now);
}

/** Records the progress and pushes it to the owner's sockets now (inside the import's transaction). */
export function reportProgress(owner: ProgressOwner, progressId: string, model: string, progress: ImportProgress): void {
  setProgress(owner, progressId, progress);
  // Straight to the bus, not `UnitOfWork.afterCommit`: the frame is about work in progress, not data it wrote.
  const env = currentEnv();
  const data = { event: 'import_progress', progress_id: progressId, model, ...progress };
  env.ports.bus?.publish({ db: env.db.name, to: { user: owner.uid }, frame: { type: 'realtime_data', data } });
}

/** The progress `owner` recorded under `progressId`, or null (unknown, expired, or someone else's). */
export function getProgress(owner: ProgressOwner, progressId: string): ImportProgress | null {
  const e = entries.get(key(owner, progressId));
  if (!e || Date.now() - e.touched > TTL_MS) return null;
  return { ...e.progress };
}
