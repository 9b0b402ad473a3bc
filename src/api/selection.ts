/**
 * Selections (spec §4.5, CONTRACTS C1): which records a bulk call, clone, execute, export or report
 * applies to — explicit `ids`, or a filter (`filter_str`, `name_search`, minus `exclude_ids`).
 * A selection is resolved once, by the ordinary query path, so rights, record rules, company
 * isolation and the archivable default apply exactly as on `/api/query`:
 *
 * - `ids` behave as the single-record routes: an archived record is reached; an id that does not
 *   exist or that the caller cannot see is a 404 for the whole call. Duplicates collapse; the
 *   order is the order sent.
 * - a filter matches what a query with it would list (archived records out unless it names
 *   `active`), in the model's default order; `filter_str: ""` means every visible record, on purpose.
 * - a selection naming nothing (`{}`, `{exclude_ids}` alone, `name_search: []`) is a 400: read as a
 *   filter it would mean "every record", and an empty body never does.
 * - an explicit empty list, `{ids: []}`, names the empty set — it cannot be read as anything else:
 *   the call covers no record and answers its empty result (`{updated: 0, ids: []}`, `[]`…), as a
 *   bare `[]` does on the bulk routes and a filter matching nothing does. A route that cannot
 *   answer nothing refuses it from the request alone (a report: 400, like `instance_ids: []`).
 */
import { BadRequest, NotFound } from '../errors.js';
import { isRecordId } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { inCondition } from '../orm/query/filter-ast.js';
import { QuerySet } from '../orm/queryset.js';

/** Most records one bulk call, clone or selection may cover (`FF_BULK_MAX`). */
export const DEFAULT_BULK_MAX = 10_000;

export type Selection =
  | { readonly ids: readonly number[] }
  | { readonly filter_str?: string; readonly name_search?: readonly string[]; readonly exclude_ids?: readonly number[] };

const SELECTION_KEYS = new Set(['ids', 'filter_str', 'name_search', 'exclude_ids']);

/**
 * Reads a selection object from a request body (`what` names it in errors). Unknown keys are
 * refused: a misspelt `filter` must not select every record.
 */
export function parseSelection(raw: unknown, what = 'selection'): Selection {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new BadRequest(`'${what}' must be an object: {ids} or {filter_str?, name_search?, exclude_ids?}`);
  }
  const body = raw as Record<string, unknown>;
  const unknown = Object.keys(body).find((k) => !SELECTION_KEYS.has(k));
  if (unknown !== undefined) {
    throw new BadRequest(`'${what}' has an unknown key '${unknown.slice(0, 40)}': expected ids, filter_str, name_search, exclude_ids`);
  }
  const named = (k: string) => body[k] !== undefined && body[k] !== null;
  if (named('ids')) {
    if (named('filter_str') || named('name_search') || named('exclude_ids')) {
      throw new BadRequest(`'${what}' names ids or a filter (filter_str, name_search, exclude_ids), not both`);
    }
    return { ids: idList(body.ids, `${what}.ids`) };
  }
  const filter_str = named('filter_str') ? text(body.filter_str, `${what}.filter_str`) : undefined;
  const name_search = named('name_search') ? terms(body.name_search, `${what}.name_search`) : undefined;
  const exclude_ids = named('exclude_ids') ? idList(body.exclude_ids, `${what}.exclude_ids`) : undefined;
  if (filter_str === undefined && !name_search?.length) {
    throw new BadRequest(`'${what}' names no records: give ids, or a filter_str ("" for every record) or name_search terms`);
  }
  return { filter_str, name_search, exclude_ids };
}

/** A list of record ids from a request (`what` names it in errors). */
export function idList(value: unknown, what: string): number[] {
  if (!Array.isArray(value) || !value.every(isRecordId)) {
    throw new BadRequest(`'${what}' must be an array of record ids (integers from 1 to 2147483647)`);
  }
  return value;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new BadRequest(`'${what}' must be a string`);
  return value;
}

function terms(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || value.some((t) => typeof t !== 'string')) throw new BadRequest(`'${what}' must be an array of strings`);
  return (value as string[]).filter((t) => t.trim() !== '');
}

export interface ResolveOptions {
  /** Most records the selection may hold (`FF_BULK_MAX`). */
  readonly max?: number;
}

/**
 * The ids a selection stands for, in its order (see the file comment). Explicit ids the caller
 * cannot see → `NotFound`; more than `max` records → `BadRequest` naming the maximum.
 */
export async function resolveSelection(meta: ModelMeta, selection: Selection, options: ResolveOptions = {}): Promise<number[]> {
  const max = options.max ?? DEFAULT_BULK_MAX;
  if ('ids' in selection) return visibleIds(meta, selection.ids, max);
  let qs = new QuerySet(meta).public_only();
  if (selection.filter_str !== undefined && selection.filter_str.trim() !== '') qs = qs.filter(selection.filter_str);
  if (selection.name_search?.length) qs = qs.search(selection.name_search);
  if (selection.exclude_ids?.length) qs = qs.filter({ id__not_in: [...selection.exclude_ids] });
  const ids = await qs.limit(max + 1).ids();
  if (ids.length > max) throw tooMany(meta, max, 'matched records');
  return ids;
}

/** `ids` as sent (duplicates collapsed), each one existing and visible to the caller. */
export async function visibleIds(meta: ModelMeta, ids: readonly number[], max = DEFAULT_BULK_MAX): Promise<number[]> {
  const unique = [...new Set(ids)];
  if (unique.length > max) throw tooMany(meta, max, 'ids');
  if (!unique.length) return [];
  // Archived records are reached, as by the single-record routes; hidden ones are as absent.
  const found = new Set(await new QuerySet(meta).public_only().with_archived().filter(inCondition(['id'], unique)).ids());
  const missing = unique.filter((id) => !found.has(id));
  if (missing.length) throw new NotFound(`${meta.name} ${missing.slice(0, 5).join(', ')} does not exist`);
  return unique;
}

function tooMany(meta: ModelMeta, max: number, what: string): BadRequest {
  return new BadRequest(`A selection of ${meta.name} may hold at most ${max} records (FF_BULK_MAX); this one has more ${what}`);
}
