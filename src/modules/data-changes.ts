/**
 * What writing data records would change on their existing records, so that an upgrade writes only
 * what differs — usually nothing. Values are compared as their column holds them (the given value
 * through `toColumn`, both sides through `fromColumn`; JSON regardless of key order), ManyToMany
 * values as sets of ids, a File upload by its bytes' checksum, name, visibility and declared type.
 * A value given to a setter cannot be read back: it always counts as a change. A comparison that
 * misses an equality only costs a write, never a skipped change.
 */
import { sha256 } from '../files/content-address.js';
import { decodeBase64 } from '../orm/base64-content.js';
import { currentFiles } from '../files/file-service.js';
import { currentEnv } from '../orm/env.js';
import type { Field } from '../orm/fields/field.js';
import { FileField, ManyToManyField } from '../orm/fields/relational-fields.js';
import { JsonField } from '../orm/fields/scalar-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { inCondition } from '../orm/query/filter-ast.js';
import { EMPTY_STATE } from '../orm/query/select-plan.js';
import { selectLinkedRows, selectRows, type Row } from '../orm/query/select-rows.js';
import { isUpload, uploadName } from './data-uploads.js';

/** An existing record as the values about to be written find it. */
export interface StoredRecord {
  id: number;
  /** Stored columns, by field name. */
  row: Row;
  /** ManyToMany ids, by field name. */
  links: Map<string, Set<number>>;
  /** The attachment a File field holds (checksum, name, mimetype, is_public), by field name. */
  files: Map<string, Row>;
}

const ALL = { ...EMPTY_STATE, activeTest: false };

/**
 * The existing records among `identifiers`, holding what the given values' fields hold now: one
 * query, plus one per ManyToMany field and one for the attachments of File fields given uploads.
 */
export async function readStored(meta: ModelMeta, identifiers: readonly string[], valsList: readonly Record<string, unknown>[]): Promise<Map<string, StoredRecord>> {
  const given = new Set(valsList.flatMap((vals) => Object.keys(vals)));
  const fields = [...given].map((name) => meta.fields.get(name)!);
  const columns = [meta.fields.get('identifier')!, ...fields.filter((f) => f.column && (!f.isComputed || f.isEditableComputed))];
  const rows = await selectRows(meta, { ...ALL, filters: [inCondition(['identifier'], [...identifiers])] }, columns);
  const stored = new Map(rows.map((row) => [String(row.identifier), { id: row.id as number, row, links: new Map(), files: new Map() } as StoredRecord]));
  if (!stored.size) return stored;
  const byId = new Map([...stored.values()].map((s) => [s.id, s]));

  for (const f of fields) {
    if (!(f instanceof ManyToManyField)) continue;
    for (const s of byId.values()) s.links.set(f.name, new Set());
    for (const link of await selectLinkedRows(f, [...byId.keys()], ALL, [])) byId.get(link.__parent as number)!.links.get(f.name)!.add(link.id as number);
  }

  const uploaded = fields.filter((f) => f instanceof FileField && valsList.some((vals) => isUpload(vals[f.name])));
  const attachmentIds = [...byId.values()].flatMap((s) => uploaded.map((f) => s.row[f.name]).filter((id): id is number => typeof id === 'number'));
  if (attachmentIds.length) {
    const attachment = currentEnv().registry.meta('Attachment');
    const atts = await selectRows(attachment, { ...ALL, filters: [inCondition(['id'], attachmentIds)] },
      ['checksum', 'name', 'mimetype', 'is_public'].map((name) => attachment.fields.get(name)!));
    const attById = new Map(atts.map((a) => [a.id as number, a]));
    for (const s of byId.values()) {
      for (const f of uploaded) {
        const att = attById.get(s.row[f.name] as number);
        if (att) s.files.set(f.name, att);
      }
    }
  }
  return stored;
}

/** The values of `vals` that differ from what the record holds (empty: nothing to write). */
export function changedValues(meta: ModelMeta, stored: StoredRecord, vals: Record<string, unknown>): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(vals)) {
    if (value === undefined) continue;
    const f = meta.fields.get(name)!;
    if (!same(f, stored, value)) changed[name] = value;
  }
  return changed;
}

function same(f: Field, stored: StoredRecord, value: unknown): boolean {
  if (f.isComputed && !f.isEditableComputed) return false;
  if (f instanceof ManyToManyField) {
    const now = stored.links.get(f.name)!;
    const want = new Set(value as number[]);
    return want.size === now.size && [...want].every((id) => now.has(id));
  }
  if (f instanceof FileField && isUpload(value)) return sameUpload(f, stored.files.get(f.name), value);
  if (!f.column) return false;
  const want = f.toColumn(value);
  if (f instanceof JsonField) return stableJson(stored.row[f.name] ?? null) === stableJson(want === null ? null : JSON.parse(want as string));
  return f.fromColumn(stored.row[f.name]) === f.fromColumn(want);
}

function sameUpload(f: FileField, att: Row | undefined, upload: Record<string, unknown>): boolean {
  if (!att) return false;
  const { bytes } = decodeBase64(upload.base64, currentFiles().uploadLimit);
  return att.checksum === sha256(bytes) && att.name === uploadName(f, upload) && att.is_public === (upload.is_public === true)
    && (typeof upload.mimetype !== 'string' || att.mimetype === upload.mimetype);
}

/** JSON text with object keys sorted (jsonb does not keep the order they were written in). */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : v));
}
