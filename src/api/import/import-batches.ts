/**
 * Writing one batch of valid records, set-based: every record to create in one `createRecords`
 * call (one INSERT for the records, one per line model, one per ManyToMany), every record to update
 * in one `writeEach` call (one UPDATE … FROM unnest) — the ordinary write path with its access
 * checks, defaults, computed fields and key checks, never a statement per row.
 *
 * What only the database can refuse (a unique key another record holds, a model's own check, a
 * compute that fails) fails the statement for the whole batch. The batch runs in a savepoint; on a
 * refusal it is rolled back and the records are tried again in smaller groups: the record the
 * refusal names (the write paths label it with its row: `FieldForgeError.item`) is set aside with its error, and the rest
 * is split in halves, each retried in its own savepoint — so k bad records among n cost about
 * k·log₂(n) extra attempts, good records still commit, and each one is whole with its lines.
 */
import { FieldForgeError, ValidationError } from '../../errors.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { createRecordIds } from '../../orm/write/create-records.js';
import { writeEach } from '../../orm/write/write-records.js';
import type { ImportColumns } from './import-columns.js';
import type { ImportedRecord, RowError } from './import-rows.js';
import { inSavepoint } from './savepoint.js';

/** A record ready to write: created, or the existing record `id` it updates. */
export interface BatchItem {
  readonly record: ImportedRecord;
  readonly updates: number | null;
  readonly vals: Record<string, unknown>;
}

export interface BatchOutcome {
  /** Per written record, its id. */
  readonly written: Map<ImportedRecord, number>;
  readonly errors: RowError[];
}

export async function writeBatch(meta: ModelMeta, items: readonly BatchItem[], columns: ImportColumns): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { written: new Map(), errors: [] };
  await attempt(meta, items, columns, outcome);
  return outcome;
}

async function attempt(meta: ModelMeta, items: readonly BatchItem[], columns: ImportColumns, outcome: BatchOutcome): Promise<void> {
  if (!items.length) return;
  const result = await inSavepoint(() => writeItems(meta, items));
  if (result.ok) {
    for (const [record, id] of result.value) outcome.written.set(record, id);
    return;
  }
  const row = result.error.item;
  const culprit = items.length === 1 ? items[0] : items.find((i) => i.record.row === row);
  if (culprit) {
    outcome.errors.push(errorOf(culprit.record.row, result.error, columns, meta));
    const rest = items.filter((i) => i !== culprit);
    const half = Math.ceil(rest.length / 2);
    await attempt(meta, rest.slice(0, half), columns, outcome);
    await attempt(meta, rest.slice(half), columns, outcome);
    return;
  }
  const half = Math.ceil(items.length / 2);
  await attempt(meta, items.slice(0, half), columns, outcome);
  await attempt(meta, items.slice(half), columns, outcome);
}

/** Creates and updates `items` (items are labelled by their record's row). */
async function writeItems(meta: ModelMeta, items: readonly BatchItem[]): Promise<Map<ImportedRecord, number>> {
  const out = new Map<ImportedRecord, number>();
  const creates = items.filter((i) => i.updates === null);
  const updates = items.filter((i) => i.updates !== null);
  if (creates.length) {
    const made = await createRecordIds(meta, creates.map((i) => i.vals), { items: creates.map((i) => i.record.row) });
    creates.forEach((i, k) => out.set(i.record, made[k]!));
  }
  if (updates.length) {
    await writeEach(meta, updates.map((i) => ({ id: i.updates!, vals: i.vals })), { items: updates.map((i) => i.record.row) });
    for (const i of updates) out.set(i.record, i.updates!);
  }
  return out;
}

/** The row error of a refusal, naming the column of the refused field when the import has one. */
function errorOf(row: number, err: FieldForgeError, columns: ImportColumns, meta: ModelMeta): RowError {
  const out: RowError = { row, message: err.message };
  if (err instanceof ValidationError && err.field) {
    const model = err.fieldModel ?? meta.name;
    const own = model === meta.name ? columns.record.find((c) => c.field.name === err.field) : undefined;
    const line = own ? undefined : columns.lines.flatMap((l) => l.columns).find((c) => c.field.name === err.field && c.field.model.name === model);
    const path = own?.path ?? line?.path;
    if (path) out.field = path;
  }
  return out;
}
