/**
 * The body of `POST /api/export/{model}` (CONTRACTS C3 Export), read and checked before a byte is
 * sent: flat keys `ids` | (`filter_str`, `name_search`, `exclude_ids`), `order_by` (entries as
 * `/api/query` takes them: the list's order reaches the file), `fields` (paths with `/`) and
 * `import_compatible`. Unlike a bulk selection, naming no records is not an error here: an
 * export without ids or filter is the whole list the caller can see (spec §4.7 "with neither it
 * exports the whole filtered list").
 */
import { BadRequest } from '../../errors.js';
import { idList } from '../selection.js';

export interface ExportRequest {
  /** Explicit records, in the order sent (duplicates collapsed)… */
  readonly ids?: readonly number[];
  /** …or every match of the filter (all visible records when absent or blank)… */
  readonly filter_str?: string;
  readonly name_search?: readonly string[];
  /** …minus these. */
  readonly exclude_ids?: readonly number[];
  /** The rows' order, as `/api/query`'s `order_by` (`['date_order DESC']`); absent or empty → ids' order. */
  readonly order_by?: readonly string[];
  /** Field paths (`customer/name`); absent → the model's default export columns. */
  readonly fields?: readonly string[];
  readonly import_compatible: boolean;
  /** The request context's `lang` (header labels, Selection labels, the file name). */
  readonly lang?: unknown;
}

const KEYS = new Set(['ids', 'filter_str', 'name_search', 'exclude_ids', 'order_by', 'fields', 'import_compatible', 'context']);

export function parseExportRequest(raw: unknown): ExportRequest {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new BadRequest('The request body must be a JSON object');
  const body = raw as Record<string, unknown>;
  // A misspelt key (`filter`, `field`) must not silently export every record or every column.
  const unknown = Object.keys(body).find((k) => !KEYS.has(k));
  if (unknown !== undefined) {
    throw new BadRequest(`Unknown key '${unknown.slice(0, 40)}': expected ids, filter_str, name_search, exclude_ids, order_by, fields, import_compatible`);
  }
  const named = (k: string) => body[k] !== undefined && body[k] !== null;
  if (named('ids') && (named('filter_str') || named('name_search') || named('exclude_ids'))) {
    throw new BadRequest("Send 'ids', or a filter (filter_str, name_search, exclude_ids), not both");
  }
  if (named('import_compatible') && typeof body.import_compatible !== 'boolean') throw new BadRequest("'import_compatible' must be true or false");
  if (named('context') && (typeof body.context !== 'object' || Array.isArray(body.context))) throw new BadRequest("'context' must be an object");
  if (named('filter_str') && typeof body.filter_str !== 'string') throw new BadRequest("'filter_str' must be a string");
  return {
    ids: named('ids') ? idList(body.ids, 'ids') : undefined,
    filter_str: named('filter_str') ? body.filter_str as string : undefined,
    name_search: named('name_search') ? strings(body.name_search, 'name_search').filter((t) => t.trim() !== '') : undefined,
    exclude_ids: named('exclude_ids') ? idList(body.exclude_ids, 'exclude_ids') : undefined,
    order_by: named('order_by') ? strings(body.order_by, 'order_by') : undefined,
    fields: named('fields') ? fieldPaths(body.fields) : undefined,
    import_compatible: body.import_compatible === true,
    lang: named('context') ? (body.context as Record<string, unknown>).lang : undefined,
  };
}

function strings(value: unknown, key: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new BadRequest(`'${key}' must be an array of strings`);
  return value as string[];
}

function fieldPaths(value: unknown): string[] {
  const paths = strings(value, 'fields');
  if (!paths.length) throw new BadRequest("'fields' names no column: leave it out for the default columns, or list field paths");
  return paths;
}
