import { Model, QuerySet, UserError, ValidationError, currentEnv, fields, withEnv } from 'fieldforge';
import type { ModelChange } from 'fieldforge';
import { assertRecordsAllowed } from '../../../src/access/record-checks.js';
import { activeAccess } from '../../../src/access/record-access.js';
import { storeContent } from '../../../src/files/stored-content.js';
import { currentFiles } from '../../../src/files/file-service.js';
import { releaseKeys } from '../../../src/files/release-keys.js';
import { REMOVAL_TABLE } from '../../../src/orm/system/removal-queue.js';
import { NotFound } from '../../../src/errors.js';
import { showValue } from '../../../src/orm/fields/field.js';
import { isRecordId } from '../../../src/orm/fields/relational-fields.js';
import { INT32_MAX } from '../../../src/orm/fields/scalar-fields.js';

/**
 * A stored file (spec §2.4): the row names the bytes by content address (`filepath`, read as
 * stored — a clone's rows keep their source's keys); `base64` is input only, decoded and stored
 * by its setter, never kept in the row. Bytes are removed only after commit, by the sweep
 * (`src/files/file-removal.ts`).
 *
 * An attachment with an owner (`model` + `record`) belongs to that record, as Odoo's
 * ir.attachment: reading it — its row (`_owned_by`) and its bytes (`/filestore`) — takes the
 * right to read the record, and
 * creating, changing or deleting it takes the right to change the record — the current owner and,
 * when the owner changes, the new one (`_check_change`). Otherwise re-pointing a file at a record
 * one may read, or away from any record, would open another record's file.
 */
export class Attachment extends Model {
  static override _verbose_name = 'Attachment';
  static override _order_by = ['id DESC'];
  static override _api_methods = ['create_from_file', 'remove_from_attachment'];
  // Listed, fetched and counted only where the caller may read the owning record (or there is none).
  static override _owned_by = { model: 'model', record: 'record' };
  static override fields = {
    name: fields.Char({ max_length: 255, required: true }),
    // Set from the stored content only: a client naming a filepath could read another database's files.
    checksum: fields.Char({ max_length: 64, index: true, readonly: true, description: 'SHA-256 of the bytes' }),
    filepath: fields.Char({ max_length: 1024, readonly: true }),
    is_public: fields.Boolean({ default: false }),
    mimetype: fields.Char({ max_length: 255 }),
    file_size: fields.Integer({ readonly: true }),
    model: fields.Char({ max_length: 255, index: true, description: 'Owning model name' }),
    record: fields.Integer({ index: true, description: 'Owning record id' }),
    field: fields.Char({ max_length: 255, description: 'Owning field name' }),
    base64: fields.Text({ calculate: 'calc_base64', setter: 'set_base64', description: 'Input only: the file content, base64-encoded' }),
    url: fields.Char({ calculate: 'calc_url' }),
  };

  declare name: string;
  declare checksum: string | null;

  /**
   * An owner must be a record that can own a file: `model` the name of a model (not an owned
   * model: an attachment owned by an attachment would be readable by nobody) and `record` a
   * positive id, never a record id without its model — otherwise the row would be hidden from its
   * own writer, or from everyone. The caller must also be allowed to change the owning records a
   * change touches — the current owner and, when the owner changes, the new one, which must exist
   * (see the class comment). A new owner that does not exist is refused exactly as one the caller
   * may not read: 404. The platform (File fields, data files) is trusted with the owners it sets;
   * the shape of the values is checked on every path.
   */
  static override async _check_change(change: ModelChange): Promise<void> {
    const given = change.op === 'delete' ? [] : change.op === 'create' ? change.vals : [change.vals];
    for (const vals of given) checkOwnerValues(vals, change.op === 'create' ? 'create' : 'write');
    if (!activeAccess()) return; // the platform (su): File fields, the sweep, data files
    const { registry } = currentEnv();
    const current = new Map<string, Set<number>>();
    const next = new Map<string, Set<number>>();
    const add = (owners: Map<string, Set<number>>, model: unknown, record: unknown) => {
      if (typeof model !== 'string' || !model || typeof record !== 'number') return;
      owners.set(model, (owners.get(model) ?? new Set<number>()).add(record));
    };
    if (change.op === 'create') {
      for (const vals of change.vals) add(next, vals.model, vals.record);
    } else {
      const rows = await withEnv({ su: true }, () => this.query({ id__in: [...change.ids] }).read(['model', 'record']));
      for (const row of rows) {
        add(current, row.model, row.record);
        if (change.op !== 'write' || !('model' in change.vals || 'record' in change.vals)) continue;
        const model = 'model' in change.vals ? change.vals.model : row.model;
        const record = 'record' in change.vals ? change.vals.record : row.record;
        if (typeof record === 'number' && (model === null || model === undefined || model === '')) {
          throw new ValidationError(`An attachment's owner record ${record} needs its model: set 'model' too, or clear 'record'`);
        }
        add(next, model, record);
      }
    }
    // A current owner may have been deleted since: its file can still be changed or deleted by
    // whoever may change the owner's records (nothing is left to check when it is gone).
    for (const [model, ids] of current) {
      if (registry.has(model)) await assertRecordsAllowed(registry.meta(model), 'write', [...ids]);
    }
    for (const [model, ids] of next) {
      if (!registry.has(model)) throw new ValidationError(`An attachment cannot belong to '${model.slice(0, 60)}': no such model`);
      const meta = registry.meta(model);
      if (meta.ownedBy) {
        throw new ValidationError(`An attachment cannot belong to a ${model} record: ${model} records belong to other records themselves`);
      }
      await assertRecordsAllowed(meta, 'write', [...ids]);
      // Rights and rules say nothing of an id no record has (an unrestricted caller is not
      // checked row by row at all): look for the records themselves.
      const found = new Set(await withEnv({ su: true }, () => new QuerySet(meta).with_archived().filter({ id__in: [...ids] }).ids()));
      const missing = [...ids].filter((id) => !found.has(id));
      if (missing.length) throw new NotFound(`${meta.name} ${missing.slice(0, 5).join(', ')} does not exist`);
    }
  }
  declare filepath: string | null;
  declare mimetype: string | null;

  calc_base64(): null {
    return null;
  }

  calc_url(): string {
    return `/filestore/view/${this.id}`;
  }

  /** Stores the content and points the row at it; the bytes the row used before are released. */
  async set_base64(value: unknown): Promise<void> {
    if (value === null || value === undefined || value === false) return;
    const previous = this.filepath;
    const stored = await storeContent(value);
    const mimetype = this.mimetype || stored.mimetype || guessMimetype(this.name);
    // The caller's right on this row was checked by the create/write that set `base64`.
    await withEnv({ su: true }, () => this.write({
      checksum: stored.checksum, filepath: stored.filepath, file_size: stored.file_size, mimetype,
    }));
    if (previous && previous !== stored.filepath) await withEnv({ su: true }, () => releaseKeys([previous], [this.id], currentFiles()));
  }

  /**
   * Stores base64 `file_content` as a new attachment and returns its id. With `model`, `record`
   * and `field` all given, the field's existing attachment is deleted first (spec §2.4.4). Also
   * callable as `/api/execute/Attachment/create_from_file` with the arguments as named inputs.
   */
  static async create_from_file(
    file_content: unknown, filename?: string, model?: string | null, record?: number | null, field?: string | null, is_public = false,
  ): Promise<number> {
    if (file_content && typeof file_content === 'object' && !Array.isArray(file_content)) {
      const i = file_content as Record<string, any>;
      return this.create_from_file(i.file_content, i.filename, i.model, i.record, i.field, i.is_public === true);
    }
    if (typeof filename !== 'string' || !filename.trim()) throw new UserError('create_from_file needs a filename');
    if (model && record && field) await this.delete_field_attachments(model, record, field);
    const created = await this.create({
      name: filename, base64: file_content, model: model ?? null, record: record ?? null, field: field ?? null, is_public,
    });
    return created.id;
  }

  /**
   * Deletes the attachment of `model`/`record`/`field` (spec §2.4.5); its bytes go once no other
   * row uses them. All three arguments are required.
   */
  static async remove_from_attachment(model?: unknown, record?: unknown, field?: unknown): Promise<number> {
    if (model && typeof model === 'object' && !Array.isArray(model)) {
      const i = model as Record<string, unknown>;
      return this.remove_from_attachment(i.model, i.record, i.field);
    }
    if (typeof model !== 'string' || !model || !isRecordId(record) || typeof field !== 'string' || !field) {
      throw new UserError('remove_from_attachment needs model, record and field');
    }
    return this.delete_field_attachments(model, record, field);
  }

  private static async delete_field_attachments(model: string, record: number, field: string): Promise<number> {
    return this.query().filter({ model, record, field }).delete();
  }
}

/**
 * The owner values a create or write gives, checked for what they are before anything is looked
 * up, on every path: `model` a text, `record` a positive id, and a record id only with its model.
 * JSON's `1e-400` reads as 0 and `true` would become the text "true": neither names an owner.
 * Whether the model exists matters once it names a record's model (see `_check_change`): `model`
 * alone says what the file is about, as Odoo's `res_model` without `res_id`, and leaves the file
 * without an owner record.
 */
function checkOwnerValues(vals: Readonly<Record<string, unknown>>, op: 'create' | 'write'): void {
  const { registry } = currentEnv();
  const model = vals.model;
  const record = vals.record;
  if (model !== undefined && model !== null && model !== '') {
    if (typeof model !== 'string') {
      throw new ValidationError(`Invalid value ${showValue(model)} for field 'model' of Attachment: expected the name of the owning model`, { field: 'model', model: 'Attachment' });
    }
    // The field's own checks first (length, NUL, half surrogate pairs), so they read as for any Char.
    registry.meta('Attachment').fields.get('model')!.toColumn(model);
  }
  if (record !== undefined && record !== null) {
    if (!isRecordId(record)) {
      throw new ValidationError(`Invalid value ${showValue(record)} for field 'record' of Attachment: expected the id of the owning record (an integer from 1 to ${INT32_MAX})`, { field: 'record', model: 'Attachment' });
    }
    // On a write a missing `model` keeps the row's (checked against the row in _check_change).
    const noModel = model === null || model === '' || (model === undefined && op === 'create');
    if (noModel) throw new ValidationError(`An attachment's owner record ${record} needs its model: set 'model' too, or clear 'record'`);
  }
}

/**
 * The removal queue of stored bytes (`src/files/file-removal.ts`): keys whose last row was
 * deleted, waiting for the sweep. No access rows: only the platform touches it.
 */
export class AttachmentRemoval extends Model {
  static override _table = REMOVAL_TABLE;
  static override _verbose_name = 'Attachment Removal';
  static override fields = {
    key: fields.Char({ max_length: 1024, required: true, index: true }),
  };
}

const MIMETYPES: Record<string, string> = {
  txt: 'text/plain', csv: 'text/csv', html: 'text/html', htm: 'text/html', css: 'text/css', js: 'text/javascript',
  json: 'application/json', xml: 'application/xml', pdf: 'application/pdf', zip: 'application/zip',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', svg: 'image/svg+xml',
  ico: 'image/x-icon', mp3: 'audio/mpeg', wav: 'audio/wav', mp4: 'video/mp4', webm: 'video/webm',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  odt: 'application/vnd.oasis.opendocument.text', ods: 'application/vnd.oasis.opendocument.spreadsheet',
};

function guessMimetype(name: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(name ?? '')?.[1]?.toLowerCase();
  return (ext && MIMETYPES[ext]) || 'application/octet-stream';
}
