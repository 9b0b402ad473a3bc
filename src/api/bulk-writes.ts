/**
 * Bulk calls (CONTRACTS C1): create many records, update many (each its own values, or one set of
 * values for a selection), delete many (ids or a selection) — each one unit of work, through the
 * ordinary write paths, whose cost does not grow with the records (one INSERT or UPDATE for all of
 * them, links and lines set-based). Any invalid item refuses the whole call with a 400 whose
 * `detail` starts with `item <index>: ` (0-based, the body's order) and nothing is written; the
 * write-key rules of spec §4.4 apply to each item. Explicit ids behave as on the single-record
 * routes (an archived record is reached; one that does not exist for the caller is a 404 for the
 * whole call); a selection resolves by the ordinary query path (`selection.ts`). `FF_BULK_MAX`
 * bounds the items of a body and the records a selection matches.
 */
import { assertRight } from '../access/record-access.js';
import { BadRequest } from '../errors.js';
import { isRecordId } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { createRecords } from '../orm/write/create-records.js';
import { deleteRecords } from '../orm/write/delete-records.js';
import { atItem, labelItem } from '../orm/write/item-errors.js';
import { writeEach, writeRecords, type RecordValues } from '../orm/write/write-records.js';
import { publicValues } from '../orm/write/write-values.js';
import { writeAnswer, type WriteAnswer } from './record-writes.js';
import { DEFAULT_BULK_MAX, parseSelection, resolveSelection, type ResolveOptions } from './selection.js';

/** What a bulk update or delete answers: how many records, and which (in the order written). */
export interface BulkUpdated {
  updated: number;
  ids: number[];
}
export interface BulkDeleted {
  deleted: number;
  ids: number[];
}

/** Creates one record per value object of a bare array; answers them in the body's order. */
export async function bulkCreate(meta: ModelMeta, body: unknown, options: ResolveOptions = {}): Promise<WriteAnswer[]> {
  // The right first, as on the single routes: an empty call to a model the caller may not change is a 403 too.
  assertRight(meta, 'create');
  const list = bareArray(body, options, 'a bare array of value objects');
  const valsList = list.map((item, i) => {
    if (!isObject(item)) throw labelItem(new BadRequest('expected an object of field values'), i);
    return atItem(i, () => publicValues(meta, item, 'create'));
  });
  const records = await createRecords(meta, valsList, { items: list.map((_, i) => i) });
  return records.map((record) => writeAnswer(meta, record.id, record));
}

/**
 * A bare array of `{id, …values}` (each record its own values) or `{selection, vals}` (the same
 * values for every record the selection matches).
 */
export async function bulkUpdate(meta: ModelMeta, body: unknown, options: ResolveOptions = {}): Promise<BulkUpdated> {
  assertRight(meta, 'write');
  if (Array.isArray(body)) {
    const list = bareArray(body, options, 'a bare array of {id, …values}');
    const entries: RecordValues[] = list.map((item, i) => {
      if (!isObject(item)) throw labelItem(new BadRequest("expected an object with the record's 'id' and its values"), i);
      if (!isRecordId(item.id)) throw labelItem(new BadRequest("'id' must be a record id (an integer from 1 to 2147483647)"), i);
      return { id: item.id, vals: atItem(i, () => publicValues(meta, item, 'update')) };
    });
    await writeEach(meta, entries, { items: list.map((_, i) => i) });
    return { updated: entries.length, ids: entries.map((e) => e.id) };
  }
  if (!isObject(body)) throw new BadRequest('The body must be a bare array of {id, …values} or {selection, vals}');
  const unknown = Object.keys(body).find((k) => k !== 'selection' && k !== 'vals');
  if (unknown !== undefined) throw new BadRequest(`Unknown key '${unknown.slice(0, 40)}': send {selection, vals}`);
  if (!isObject(body.vals)) throw new BadRequest("'vals' must be an object of field values");
  if (body.selection === undefined) throw new BadRequest("'selection' is required with 'vals'");
  const ids = await resolveSelection(meta, parseSelection(body.selection), options);
  await writeRecords(meta, ids, publicValues(meta, body.vals, 'update'));
  return { updated: ids.length, ids };
}

/** Deletes the records of a bare array of ids, or of a selection object. */
export async function bulkDelete(meta: ModelMeta, body: unknown, options: ResolveOptions = {}): Promise<BulkDeleted> {
  assertRight(meta, 'delete');
  let ids: number[];
  if (Array.isArray(body)) {
    const list = bareArray(body, options, 'a bare array of ids');
    const bad = list.findIndex((id) => !isRecordId(id));
    if (bad >= 0) throw labelItem(new BadRequest('expected a record id (an integer from 1 to 2147483647)'), bad);
    // As the single delete route: a record the caller cannot see, or that does not exist, is a 404.
    ids = [...new Set(list as number[])];
  } else {
    if (!isObject(body)) throw new BadRequest('The body must be a bare array of ids or a selection object');
    ids = await resolveSelection(meta, parseSelection(body, 'body'), options);
  }
  await deleteRecords(meta, ids);
  return { deleted: ids.length, ids };
}

/** The items of a bare-array body, at most `FF_BULK_MAX` of them. */
function bareArray(body: unknown, options: ResolveOptions, expected: string): unknown[] {
  if (!Array.isArray(body)) throw new BadRequest(`The body must be ${expected}`);
  const max = options.max ?? DEFAULT_BULK_MAX;
  if (body.length > max) throw new BadRequest(`A bulk call takes at most ${max} items (FF_BULK_MAX); this one has ${body.length}`);
  return body;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
