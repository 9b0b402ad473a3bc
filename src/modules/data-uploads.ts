/**
 * File uploads of the records a data batch creates (`flag: {name, base64, mimetype, is_public}`),
 * stored in bulk: the contents with one lock statement (`files/stored-contents.ts`), all the
 * attachments in one INSERT, their owners set in one UPDATE once the records exist. The write
 * path (`orm/write/file-values.ts`) does the same a record at a time — an attachment INSERT, its
 * setter's store and write, then its owner — with the same result: an attachment owned by the
 * record's field. Uploads that do not declare their `mimetype` are left to that path, which
 * guesses it from the name.
 */
import { sql } from '../db/sql-fragment.js';
import { storeContents } from '../files/stored-contents.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { runSql } from '../orm/execute-sql.js';
import { FileField } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { createRecords } from '../orm/write/create-records.js';

/** A File value that is an upload rather than an attachment id. */
export function isUpload(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'base64' in value;
}

/** The attachment's name, as the write path names it. */
export function uploadName(f: FileField, upload: Record<string, unknown>): string {
  return typeof upload.name === 'string' && upload.name ? upload.name : f.name;
}

/**
 * Stores the uploads of `valsList` (values of new `meta` records) and gives the values with the
 * attachment ids instead; `own(ids)` makes each attachment its record's once they are created.
 */
export async function storeUploads(meta: ModelMeta, valsList: readonly Record<string, unknown>[]): Promise<{
  valsList: Record<string, unknown>[];
  own(ids: readonly number[]): Promise<void>;
} | null> {
  const fields = [...meta.fields.values()].filter((f): f is FileField => f instanceof FileField && f.column !== null);
  const uploads = valsList.flatMap((vals, row) => fields.flatMap((field) => {
    const upload = vals[field.name];
    return isUpload(upload) && typeof upload.mimetype === 'string' && upload.mimetype ? [{ row, field, upload }] : [];
  }));
  if (!uploads.length) return null;

  const stored = await storeContents(uploads.map((u) => u.upload.base64));
  const attachment = currentEnv().registry.meta('Attachment');
  // Written as the platform, as the write path does: the caller's right is on the owning record.
  const created = await withEnv({ su: true }, () => createRecords(attachment, uploads.map(({ field, upload }, i) => {
    const { checksum, filepath, file_size } = stored[i]!;
    return {
      name: uploadName(field, upload), mimetype: upload.mimetype, is_public: upload.is_public === true,
      checksum, filepath, file_size, model: meta.name, field: field.name,
    };
  })));
  const out = valsList.map((vals) => ({ ...vals }));
  uploads.forEach((u, i) => { out[u.row]![u.field.name] = created[i]!.id; });
  return {
    valsList: out,
    async own(ids) {
      const attachmentIds = created.map((a) => a.id);
      const records = uploads.map((u) => ids[u.row]!);
      await runSql(sql`UPDATE ${sql.table(attachment.table)} AS a SET record = owner.record
        FROM unnest(${attachmentIds}::int[], ${records}::int[]) AS owner(id, record) WHERE a.id = owner.id`);
    },
  };
}
