/**
 * Upserts a batch of data records of one model by identifier, in a number of statements that does
 * not grow with the batch: one query for the existing records and what they hold, one INSERT for
 * the new records (their identifiers with them; a very large batch is cut into INSERTs of
 * `insertRows` rows) with their uploads stored in bulk, and for the existing records only the
 * values that differ — records with the same changes in one write, unchanged records not at all.
 */
import { ModuleError, ValidationError } from '../errors.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeRecords } from '../orm/write/write-records.js';
import { changedValues, readStored, stableJson } from './data-changes.js';
import { checkWriteValues } from './data-checks.js';
import { recordWhere, type DataRecord } from './data-files.js';
import type { IdentifierIndex, ResolvedRecord } from './data-references.js';
import { isUpload, storeUploads } from './data-uploads.js';

/** Bind parameters one INSERT may use: PostgreSQL allows 65,535, and a row takes at most one per field. */
const MAX_PARAMETERS = 30_000;

function insertRows(meta: ModelMeta): number {
  return Math.max(1, Math.floor(MAX_PARAMETERS / meta.fields.size));
}

export async function upsertBatch(meta: ModelMeta, batch: readonly ResolvedRecord[], index: IdentifierIndex): Promise<void> {
  if (!batch.length) return;
  const stored = await readStored(meta, batch.map((r) => r.rec.identifier), batch.map((r) => r.vals));
  const fresh = batch.filter((r) => !stored.has(r.rec.identifier));

  for (const r of fresh) checkWriteValues(meta, r.vals, 'create', recordWhere(r.rec));
  const size = insertRows(meta);
  for (let i = 0; i < fresh.length; i += size) {
    const chunk = fresh.slice(i, i + size);
    await explained(chunk.map((r) => r.rec), async () => {
      const uploads = await storeUploads(meta, chunk.map((r) => r.vals));
      const valsList = (uploads?.valsList ?? chunk.map((r) => r.vals)).map((vals, j) => ({ ...vals, identifier: chunk[j]!.rec.identifier }));
      const ids = (await createRecords(meta, valsList)).map((rec) => rec.id);
      await uploads?.own(ids);
      chunk.forEach((r, j) => index.set(meta.name, r.rec.identifier, ids[j]!));
    });
  }

  // Existing records: what differs, grouped by identical changes (an upload is one record's own).
  const writes = new Map<string, { vals: Record<string, unknown>; ids: number[]; recs: DataRecord[] }>();
  for (const r of batch) {
    const s = stored.get(r.rec.identifier);
    if (!s) continue;
    index.set(meta.name, r.rec.identifier, s.id);
    const where = recordWhere(r.rec);
    const changed = await explained([r.rec], async () => changedValues(meta, s, r.vals));
    if (!Object.keys(changed).length) continue;
    checkWriteValues(meta, changed, 'update', where);
    const key = Object.values(changed).some(isUpload) ? `#${s.id}` : stableJson(changed);
    const group = writes.get(key) ?? writes.set(key, { vals: changed, ids: [], recs: [] }).get(key)!;
    group.ids.push(s.id);
    group.recs.push(r.rec);
  }
  for (const { vals, ids, recs } of writes.values()) await explained(recs, () => writeRecords(meta, ids, vals));
}

/** Runs a write of `recs`, a ValidationError becoming a ModuleError that names them. */
async function explained<T>(recs: readonly DataRecord[], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ValidationError) throw new ModuleError(`${recordsWhere(recs)}: ${err.message}`);
    throw err;
  }
}

function recordsWhere(recs: readonly DataRecord[]): string {
  if (recs.length === 1) return recordWhere(recs[0]!);
  const numbers = recs.slice(0, 5).map((r) => r.index + 1).join(', ');
  return `${recs[0]!.file} records ${numbers}${recs.length > 5 ? ` … (${recs.length} ${recs[0]!.model} records)` : ''}`;
}
