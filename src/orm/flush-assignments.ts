/**
 * Writes the field values model code assigned (`pending-writes.ts`) through the ordinary write
 * path, in the environment each assignment was made in, and refreshes the assigned records with
 * what the write stored (recomputed fields included). Called before every statement of a unit of
 * work (`execute-sql.ts`), before a savepoint is released and before the commit (`unit-of-work.ts`).
 */
import { currentEnv, runInEnv } from './env.js';
import type { Model } from './model.js';
import type { ModelMeta } from './model-meta.js';
import type { PendingWrites } from './pending-writes.js';
import { RecordBatch } from './record-batch.js';
import { writeEach } from './write/write-records.js';

/** Writes one queue of assignments (a unit of work's, or one savepoint's: `unit-of-work.ts`). */
export async function flushPending(pending: PendingWrites): Promise<void> {
  if (!pending.size) return;
  await pending.flush(
    (meta, entries, at) => runInEnv(at, () => writeEach(meta, entries)),
    (meta, records, at) => runInEnv(at, () => refresh(meta, records)),
  );
}

/** Re-reads the records' columns in one query (as the platform: the writer may not read them back). */
async function refresh(meta: ModelMeta, records: readonly Model[]): Promise<void> {
  const fresh = await runInEnv({ ...currentEnv(), su: true }, () => RecordBatch.load(meta, records.map((r) => r.id)));
  const byId = new Map(fresh.map((r) => [r.id, r._values]));
  for (const record of records) {
    const values = byId.get(record.id);
    if (values) record._values = values;
  }
}
