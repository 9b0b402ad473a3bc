/**
 * File fields in the write paths (spec §2.4.6). A File field holds an `Attachment` id; a write may
 * instead give an upload — `{name, base64, mimetype?, is_public?}` (base64 may be a `data:` URL) —
 * which becomes an Attachment owned by the record (`model`, `record`, `field`). Replacing or
 * clearing the value deletes the attachment the field owned, and deleting a record deletes the
 * attachments it owns; deleting an Attachment releases its bytes (the file-store port,
 * `files/release-keys.ts`).
 * Attachments are written as the platform: the caller's rights on the owning record are what the
 * create/write/delete itself checks.
 */
import { sql } from '../../db/sql-fragment.js';
import { ValidationError } from '../../errors.js';
import { decodeBase64 } from '../base64-content.js';
import { currentEnv, withEnv } from '../env.js';
import { FileField } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';
import { atItemAsync, type ItemIndexes } from './item-errors.js';

const ATTACHMENT = 'Attachment';

const fileFieldsOf = new WeakMap<ModelMeta, readonly FileField[]>();

/** The model's stored file fields, worked out once per model (every create and write asks). */
export function fileFields(meta: ModelMeta): readonly FileField[] {
  let fields = fileFieldsOf.get(meta);
  if (!fields) {
    fields = [...meta.fields.values()].filter((f): f is FileField => f instanceof FileField && f.column !== null);
    fileFieldsOf.set(meta, fields);
  }
  return fields;
}

/** An upload is an object with `base64` (a bare string stays an error: it is neither an id nor a named file). */
function isUpload(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'base64' in value;
}

/** Uploads of `vals` stored as attachments; the returned values hold their ids instead. */
async function storeUploads(meta: ModelMeta, vals: Record<string, unknown>, record: number | null): Promise<{ vals: Record<string, unknown>; created: number[] }> {
  const out = { ...vals };
  const created: number[] = [];
  for (const f of fileFields(meta)) {
    const value = vals[f.name];
    if (!isUpload(value)) continue;
    const upload = value;
    const [att] = await withEnv({ su: true }, () => currentEnv().work.writes.createRecords(currentEnv().registry.meta(ATTACHMENT), [{
      name: typeof upload.name === 'string' && upload.name ? upload.name : f.name,
      mimetype: typeof upload.mimetype === 'string' ? upload.mimetype : null,
      is_public: upload.is_public === true,
      base64: upload.base64, model: meta.name, record, field: f.name,
    }]));
    out[f.name] = att!.id;
    created.push(att!.id);
  }
  return { vals: out, created };
}

/**
 * Before a create: uploads become attachments; `finish` gives them their records once inserted.
 * Null, without a promise to await, when the values carry no upload (most creates).
 */
export function prepareFileCreate(meta: ModelMeta, valsList: readonly Record<string, unknown>[], items?: ItemIndexes) {
  if (!fileFields(meta).length || !valsList.some((v) => fileFields(meta).some((f) => isUpload(v[f.name])))) return null;
  return storeCreateUploads(meta, valsList, items);
}

async function storeCreateUploads(meta: ModelMeta, valsList: readonly Record<string, unknown>[], items?: ItemIndexes) {
  const prepared: { vals: Record<string, unknown>; created: number[] }[] = [];
  // An upload is stored per record (its bytes are its own); records without one cost nothing.
  for (const [i, vals] of valsList.entries()) prepared.push(await atItemAsync(items?.[i], () => storeUploads(meta, vals, null)));
  return {
    valsList: prepared.map((p) => p.vals),
    /** The attachments made from the uploads (not ids a caller named). */
    uploaded: new Set(prepared.flatMap((p) => p.created)),
    async finish(ids: readonly number[]): Promise<void> {
      const pairs = ids.flatMap((id, i) => prepared[i]!.created.map((attachment) => [attachment, id] as const));
      if (!pairs.length) return;
      await sql`UPDATE attachment AS a SET record = v.record
        FROM unnest(${pairs.map((p) => p[0])}::int[], ${pairs.map((p) => p[1])}::int[]) AS v(id, record)
        WHERE a.id = v.id`.execute(currentEnv().work.trx);
    },
  };
}

/** Before a write: uploads become attachments; `finish` deletes the attachments the fields owned before. */
export async function prepareFileWrite(meta: ModelMeta, ids: readonly number[], vals: Record<string, unknown>) {
  const written = fileFields(meta).filter((f) => f.name in vals && vals[f.name] !== undefined);
  if (!written.length) return null;
  if (ids.length > 1 && written.some((f) => isUpload(vals[f.name]))) {
    throw new ValidationError('A file is uploaded to one record at a time');
  }
  const env = currentEnv();
  const before = await sql<Record<string, number | null>>`SELECT id, ${sql.join(written.map((f) => sql.id(f.column!)))}
    FROM ${sql.table(meta.table)} WHERE id = ANY(${[...ids]}::int[])`.execute(env.work.trx);
  const { vals: out, created } = await storeUploads(meta, vals, ids.length === 1 ? ids[0]! : null);
  return {
    vals: out,
    /** The attachments made from the uploads (not ids a caller named). */
    uploaded: new Set(created),
    async finish(): Promise<void> {
      const stale: number[] = [];
      for (const row of before.rows) {
        for (const f of written) {
          const old = row[f.column!];
          if (old && old !== out[f.name]) stale.push(old);
        }
      }
      if (!stale.length) return;
      // Only the attachments these fields owned: an id linked from elsewhere is not ours to delete.
      const owned = await sql<{ id: number }>`SELECT id FROM attachment WHERE id = ANY(${stale}::int[]) AND model = ${meta.name}
        AND record = ANY(${[...ids]}::int[]) AND field = ANY(${written.map((f) => f.name)})`.execute(env.work.trx);
      const meta2 = env.registry.meta(ATTACHMENT);
      if (owned.rows.length) await withEnv({ su: true }, () => currentEnv().work.writes.deleteRecords(meta2, owned.rows.map((r) => r.id)));
    },
  };
}

/**
 * A write that reaches no record (a selection matching nothing): its uploads are checked as storing
 * them would check them — base64, within the upload limit — but not stored (there is no record to
 * own them). Answers the values without the uploads, for the rest of the values to be checked.
 */
export function checkedWithoutUploads(meta: ModelMeta, vals: Record<string, unknown>): Record<string, unknown> {
  const uploads = fileFields(meta).filter((f) => isUpload(vals[f.name]));
  if (!uploads.length) return vals;
  const limit = currentEnv().ports.files?.uploadLimit ?? Number.POSITIVE_INFINITY;
  const out = { ...vals };
  for (const f of uploads) {
    decodeBase64((vals[f.name] as Record<string, unknown>).base64, limit);
    delete out[f.name];
  }
  return out;
}

/** Before a delete: attachments release their bytes; records' own attachments are deleted after. */
export async function prepareFileDelete(meta: ModelMeta, ids: readonly number[]) {
  // No file storage (a bare environment): no store holds bytes to release.
  if (meta.name === ATTACHMENT && ids.length) await currentEnv().ports.files?.releaseAttachments(ids);
  if (!fileFields(meta).length || !currentEnv().registry.models.has(ATTACHMENT)) return null;
  return {
    async finish(): Promise<void> {
      const owned = await sql<{ id: number }>`SELECT id FROM attachment WHERE model = ${meta.name}
        AND record = ANY(${[...ids]}::int[])`.execute(currentEnv().work.trx);
      if (owned.rows.length) {
        await withEnv({ su: true }, () => currentEnv().work.writes.deleteRecords(currentEnv().registry.meta(ATTACHMENT), owned.rows.map((r) => r.id)));
      }
    },
  };
}
