/**
 * Writing records as a client asks (spec §4.4): create, update and delete one record, with the
 * write-key rules of §4.4 (keys that are unknown or not settable are ignored) and the answers the
 * API gives. The bulk calls (`bulk-writes.ts`) answer item by item in the same shape.
 */
import type { ModelMeta } from '../orm/model-meta.js';
import type { Model } from '../orm/model.js';
import { RecordBatch } from '../orm/record-batch.js';
import { createForAnswer } from '../orm/write/create-records.js';
import { displayName } from '../orm/display-name.js';
import { deleteRecords } from '../orm/write/delete-records.js';
import { writeRecords } from '../orm/write/write-records.js';
import { publicValues } from '../orm/write/write-values.js';

/** What a create or update answers: the record's `id`, its `name` field (or display name) and display name. */
export interface WriteAnswer {
  id: number;
  name: unknown;
  display_name: string | null;
}

/**
 * The answer for a written record. An update may leave its record out of the writer's sight (a
 * record rule or company it moved the record out of): the write was allowed when it was made and
 * stands, as in Odoo, and the answer gives the id without the names the writer may no longer read.
 */
export function writeAnswer(meta: ModelMeta, id: number, record: Model | undefined): WriteAnswer {
  if (!record) return { id, name: null, display_name: null };
  return answerOf(meta, record._values);
}

/** The answer from a record's stored values (its row): `name`, or the display name without one. */
function answerOf(meta: ModelMeta, values: Record<string, unknown>): WriteAnswer {
  const displayed = displayName(meta, values);
  const name = meta.fields.get('name')?.column ? values.name ?? null : displayed;
  return { id: values.id as number, name, display_name: displayed };
}

/**
 * Creates one record from a client's values, as the whole of the caller's unit of work (the
 * create may then commit by itself: `create-alone.ts`).
 */
export async function createRecord(meta: ModelMeta, body: unknown): Promise<WriteAnswer> {
  return answerOf(meta, await createForAnswer(meta, publicValues(meta, body, 'create')));
}

/** Writes a client's values to one record (404 when the caller cannot see it). */
export async function updateRecord(meta: ModelMeta, id: number, body: unknown): Promise<WriteAnswer> {
  await writeRecords(meta, [id], publicValues(meta, body, 'update'));
  // Loaded as the writer: a record it may no longer read is not there (see writeAnswer).
  const [record] = await RecordBatch.load(meta, [id]);
  return writeAnswer(meta, id, record);
}

/** Deletes one record (404 when the caller cannot see it). */
export async function deleteRecord(meta: ModelMeta, id: number): Promise<{ id: number; deleted: true }> {
  await deleteRecords(meta, [id]);
  return { id, deleted: true };
}
