/**
 * Reading records as a client asks (spec §4.2, §4.3, §4.7 name_search): the operations behind
 * `/api/query`, `/api/fetch` and `/api/name_search`, for every entry point (HTTP, the socket, the
 * CLI). Everything goes through a queryset restricted to public fields (or, for a fetch, the
 * statement such a queryset builds, compiled once), so rights, record rules, company isolation and
 * the archivable default hold.
 */
import { NotFound } from '../errors.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { QuerySet, type AggregateFunction } from '../orm/queryset.js';
import { readById } from '../orm/read/read-by-id.js';

/** Default page size of a query, and the largest a client may ask for. */
export const DEFAULT_LIMIT = 80;
export const MAX_LIMIT = 2000;
/** Default number of name_search matches. */
export const DEFAULT_NAME_SEARCH_LIMIT = 8;

export interface QueryParams {
  fields?: readonly string[];
  filter_str?: string;
  order_by?: readonly string[];
  limit?: number;
  /** 1-based. */
  page?: number;
  group_fields?: readonly string[];
  name_search?: readonly string[];
  counter?: boolean;
  /** Numeric fields to sum over every match. */
  footer_aggregates?: readonly string[];
}

/**
 * A page of records (or of groups), as a bare array; with `counter` or `footer_aggregates` an
 * object `{count, data, aggregates?}` whose count covers every match, not the page.
 */
export async function queryRecords(meta: ModelMeta, params: QueryParams): Promise<unknown> {
  const limit = params.limit ?? DEFAULT_LIMIT;
  const page = params.page ?? 1;
  let qs = new QuerySet(meta).public_only();
  if (params.filter_str !== undefined && params.filter_str.trim() !== '') qs = qs.filter(params.filter_str);
  if (params.name_search) qs = qs.search(params.name_search.filter((t) => t.trim() !== ''));
  if (params.order_by?.length) qs = qs.order_by(...params.order_by);
  const footer = params.footer_aggregates;
  const aggregates: Record<string, AggregateFunction> = Object.fromEntries((footer ?? []).map((f) => [f, 'sum']));
  const paged = qs.limit(limit).offset((page - 1) * limit);
  const grouped = Boolean(params.group_fields?.length);
  if (!params.counter && footer === undefined) {
    return grouped ? paged.group(params.group_fields!, aggregates) : paged.read(params.fields);
  }
  // Records and their count in one statement; groups count their records apart.
  const { records: data, count } = grouped
    ? { records: await paged.group(params.group_fields!, aggregates), count: await qs.count() }
    : await paged.read_counted(params.fields);
  const answer: Record<string, unknown> = { count, data };
  if (footer !== undefined) answer.aggregates = await qs.aggregate(aggregates);
  return answer;
}

/** One record along `fields` (archived ones too); `NotFound` when it does not exist for the caller. */
export async function fetchRecord(meta: ModelMeta, id: number, fields?: readonly string[]): Promise<Record<string, unknown>> {
  // One row at most, ordered by its key alone (not the model's default order, which may join); the
  // statement is compiled once per caller and field list (`readById`).
  const record = await readById(meta, id, fields, true);
  if (!record) throw new NotFound(`${meta.name} ${id} does not exist`);
  return record;
}

export interface NameSearchParams {
  term?: string;
  limit?: number;
  /** A Q-expression narrowing the candidates (a relation's `filter`). */
  filter?: string;
}

/** `[{id, display_name}]` of the records whose name-search fields match `term`. */
export async function nameSearch(meta: ModelMeta, params: NameSearchParams): Promise<Record<string, unknown>[]> {
  let qs = new QuerySet(meta).public_only().limit(params.limit ?? DEFAULT_NAME_SEARCH_LIMIT);
  if (params.term?.trim()) qs = qs.search([params.term]);
  if (params.filter?.trim()) qs = qs.filter(params.filter);
  return qs.read(['display_name']);
}
