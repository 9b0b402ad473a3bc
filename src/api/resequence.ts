/**
 * Resequencing (spec §4.9, CONTRACTS C3): a record dragged to a new place in a list, and the list
 * renumbered 1..N around it.
 *
 * The scope is what `/api/query` would list for the caller with `scope_filter` (every visible
 * record without it): rights, record rules, company isolation and the archivable default apply
 * as to a selection. It is read in the model's default order, the sequence field sorting NULLS
 * LAST wherever that order names it (appended before the final `id` when it does not), `id`
 * ending every order — so rows with equal or no numbers keep the place the list shows them in.
 * The dropped record moves after `after_column_id` (first when null) and every record whose
 * number changes is written through the ordinary write path in ONE UPDATE (arrays through
 * `unnest`, `update-rows.ts`): write rights and rules on exactly those records (403, nothing
 * written), `updated_date`/`updated_by` on exactly those records, as a bulk update sets them.
 * Records whose number stays are not written.
 */
import { assertRight } from '../access/record-access.js';
import { BadRequest } from '../errors.js';
import { isRecordId } from '../orm/fields/relational-fields.js';
import type { Field } from '../orm/fields/field.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { parseOrderEntry } from '../orm/query/compile-order.js';
import { selectRows } from '../orm/query/select-rows.js';
import { QuerySet } from '../orm/queryset.js';
import { writeEach } from '../orm/write/write-records.js';
import { DEFAULT_BULK_MAX, visibleIds, type ResolveOptions } from './selection.js';

/** What a resequence answers: the scope's ids in their new order. */
export interface Resequenced {
  ids: number[];
}

interface ResequenceRequest {
  dropped: number;
  after: number | null;
  field: Field;
  scopeFilter: string | null;
}

const KEYS = new Set(['dropped_column_id', 'after_column_id', 'sequence_field', 'scope_filter']);

export async function resequence(meta: ModelMeta, body: unknown, options: ResolveOptions = {}): Promise<Resequenced> {
  // The right first: a caller who may change nothing of the model learns nothing about its rows.
  assertRight(meta, 'write');
  const request = parseRequest(meta, body);
  const max = options.max ?? DEFAULT_BULK_MAX;
  const rows = await scopeRows(meta, request, max);
  const ids = rows.map((r) => r.id as number);
  if (!ids.includes(request.dropped)) {
    // A record the caller cannot see is as absent as one that does not exist (404); a visible one
    // the scope does not hold is a wrong request.
    await visibleIds(meta, [request.dropped]);
    throw new BadRequest(`${meta.name} ${request.dropped} (dropped_column_id) is not in the scope being resequenced`);
  }
  if (request.after !== null && !ids.includes(request.after)) {
    throw new BadRequest(`${meta.name} ${request.after} (after_column_id) is not in the scope being resequenced`);
  }
  const order = ids.filter((id) => id !== request.dropped);
  order.splice(request.after === null ? 0 : order.indexOf(request.after) + 1, 0, request.dropped);

  const current = new Map(rows.map((r) => [r.id as number, r[request.field.name]]));
  const changes = order.flatMap((id, i) => (current.get(id) === i + 1 ? [] : [{ id, vals: { [request.field.name]: i + 1 } }]));
  await writeEach(meta, changes);
  return { ids: order };
}

function parseRequest(meta: ModelMeta, body: unknown): ResequenceRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('The body must be an object: {dropped_column_id, after_column_id, sequence_field?, scope_filter?}');
  }
  const raw = body as Record<string, unknown>;
  // A misspelt key must not silently renumber the whole model.
  const unknown = Object.keys(raw).find((k) => !KEYS.has(k));
  if (unknown !== undefined) {
    throw new BadRequest(`Unknown key '${unknown.slice(0, 40)}': expected dropped_column_id, after_column_id, sequence_field, scope_filter`);
  }
  if (!isRecordId(raw.dropped_column_id)) throw new BadRequest("'dropped_column_id' must be a record id (an integer from 1 to 2147483647)");
  const after = raw.after_column_id ?? null;
  if (after !== null && !isRecordId(after)) throw new BadRequest("'after_column_id' must be a record id or null (first place)");
  if (after === raw.dropped_column_id) throw new BadRequest("'after_column_id' must name another record than 'dropped_column_id'");
  const name = raw.sequence_field ?? 'sequence';
  if (typeof name !== 'string') throw new BadRequest("'sequence_field' must be a field name");
  const field = meta.fields.get(name);
  // The number is written like any client value, so the field must be one a client may set.
  if (!field || field.type !== 'Integer' || !field.column || !field.isSettable || name === 'id') {
    throw new BadRequest(`'${name.slice(0, 60)}' is not a writable Integer field of ${meta.name}: it cannot hold a sequence`);
  }
  const scopeFilter = raw.scope_filter ?? null;
  if (scopeFilter !== null && typeof scopeFilter !== 'string') throw new BadRequest("'scope_filter' must be a Q-expression string");
  return { dropped: raw.dropped_column_id, after, field, scopeFilter };
}

/** The scope's ids and current numbers, in the order they are renumbered in. */
async function scopeRows(meta: ModelMeta, request: ResequenceRequest, max: number) {
  let qs = new QuerySet(meta).public_only().order_by(...renumberOrder(meta, request.field.name));
  if (request.scopeFilter !== null && request.scopeFilter.trim() !== '') qs = qs.filter(request.scopeFilter);
  const rows = await selectRows(meta, qs.limit(max + 1).state, [request.field]);
  if (rows.length > max) {
    throw new BadRequest(`A resequence of ${meta.name} may renumber at most ${max} records (FF_BULK_MAX); narrow it with scope_filter`);
  }
  return rows;
}

/**
 * The model's default order with the sequence field NULLS LAST (numbered rows first), the field
 * added before a trailing `id` when the order does not name it; `compileOrder` ends it by `id`.
 */
export function renumberOrder(meta: ModelMeta, field: string): string[] {
  let named = false;
  const entries = meta.orderBy.map((raw) => {
    const entry = parseOrderEntry(raw);
    if (entry.path.length !== 1 || entry.path[0] !== field) return raw;
    named = true;
    return `${field} ${entry.descending ? 'DESC' : 'ASC'} NULLS LAST`;
  });
  if (named) return entries;
  const byId = entries.findIndex((raw) => parseOrderEntry(raw).path.join('.') === 'id');
  entries.splice(byId < 0 ? entries.length : byId, 0, `${field} ASC NULLS LAST`);
  return entries;
}
