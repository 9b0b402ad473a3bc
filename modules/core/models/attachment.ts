import { Model, UserError, ValidationError, currentEnv, fields, withEnv } from 'fieldforge';
import type { ModelChange } from 'fieldforge';
import { assertRecordsAllowed } from '../../../src/access/record-checks.js';
import { activeAccess } from '../../../src/access/record-access.js';
import { storeContent } from '../../../src/files/stored-content.js';
import { releaseKeys } from '../../../src/files/release-keys.js';
import { REMOVAL_TABLE } from '../../../src/files/file-removal.js';

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

  /** The caller must be allowed to write the owning records a change touches (see the class comment). */
  static override async _check_change(change: ModelChange): Promise<void> {
    if (!activeAccess()) return; // the platform (su): File fields, the sweep, data files
    const owners = new Map<string, Set<number>>();
    const add = (model: unknown, record: unknown) => {
      if (typeof model !== 'string' || !model || typeof record !== 'number' || !record) return;
      const set = owners.get(model) ?? new Set<number>();
      owners.set(model, set.add(record));
    };
    if (change.op === 'create') {
      for (const vals of change.vals) add(vals.model, vals.record);
    } else {
      const current = await withEnv({ su: true }, () => this.query({ id__in: [...change.ids] }).read(['model', 'record']));
      for (const row of current) {
        add(row.model, row.record);
        if (change.op === 'write' && ('model' in change.vals || 'record' in change.vals)) {
          add('model' in change.vals ? change.vals.model : row.model, 'record' in change.vals ? change.vals.record : row.record);
        }
      }
    }
    const { registry } = currentEnv();
    for (const [model, ids] of owners) {
      if (!registry.has(model)) throw new ValidationError(`An attachment cannot belong to '${model.slice(0, 60)}': no such model`);
      await assertRecordsAllowed(registry.meta(model), 'write', [...ids]);
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
    if (previous && previous !== stored.filepath) await withEnv({ su: true }, () => releaseKeys([previous], [this.id]));
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
    if (typeof model !== 'string' || !model || typeof record !== 'number' || !record || typeof field !== 'string' || !field) {
      throw new UserError('remove_from_attachment needs model, record and field');
    }
    return this.delete_field_attachments(model, record, field);
  }

  private static async delete_field_attachments(model: string, record: number, field: string): Promise<number> {
    return this.query().filter({ model, record, field }).delete();
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
