/**
 * The body of `POST /api/import/{model}` (spec §4.8, CONTRACTS C3) read and checked for shape:
 * anything a client could get wrong before a single row is looked at — `fields` not strings,
 * `data` not rows, `create_fields` not parallel to `fields`, an unknown key, too many rows — is a
 * 400 naming it. What a row's cells hold is judged per row later (`cell-values.ts`). The bounds
 * of `import-limits.ts` hold: at most 1,000 columns, at most 1 MiB of text per row. The rows are
 * checked in event-loop turns of about 10 ms (a body may hold millions of cells).
 */
import { BadRequest } from '../../errors.js';
import { parseDateFormat, type DateFormat } from './cell-values.js';
import { EventLoopTurns } from './event-loop-turns.js';
import { MAX_COLUMNS, MAX_RECORD_CHARS, recordTooLarge, tooManyColumns } from './import-limits.js';

/** A cell as JSON carries it. */
export type Cell = string | number | boolean | null;

export interface ImportRequest {
  readonly fields: readonly string[];
  /** Row 0 is the header; rows are as sent (shorter rows read as blank cells). */
  readonly data: readonly (readonly Cell[])[];
  readonly createFields: readonly boolean[];
  readonly matchFields: readonly string[];
  readonly dateFormat: DateFormat | null;
  readonly dryRun: boolean;
  readonly atomic: boolean;
  readonly progressId: string | null;
}

const KEYS = new Set(['fields', 'data', 'create_fields', 'match_fields', 'date_format', 'dry_run', 'atomic', 'progress_id']);
/** Longest field path or progress id accepted (a path is a few field names). */
const MAX_NAME = 200;

export async function parseImportRequest(body: unknown, maxRows: number): Promise<ImportRequest> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('The body must be an object: {fields, data, create_fields?, match_fields?, date_format?, dry_run?, atomic?, progress_id?}');
  }
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).find((k) => !KEYS.has(k));
  if (unknown !== undefined) throw new BadRequest(`Unknown key '${unknown.slice(0, 40)}': expected ${[...KEYS].join(', ')}`);

  const fields = b.fields;
  if (Array.isArray(fields) && fields.length > MAX_COLUMNS) throw tooManyColumns("'fields'");
  // An empty path leaves its column out (a column the person did not map), as Odoo's `false`.
  if (!Array.isArray(fields) || !fields.length || !fields.every((f) => typeof f === 'string' && f.length <= MAX_NAME)) {
    throw new BadRequest(`'fields' must be a non-empty array of field paths (strings of at most ${MAX_NAME} characters; "" leaves a column out)`);
  }
  const data = b.data;
  if (!Array.isArray(data) || !data.length) throw new BadRequest("'data' must be an array of rows, the header row (row 0) first");
  if (data.length - 1 > maxRows) throw new BadRequest(`An import takes at most ${maxRows} data rows; this one has ${data.length - 1}`);
  const turns = new EventLoopTurns();
  for (let i = 0; i < data.length; i++) {
    const row: unknown = data[i];
    if (!Array.isArray(row)) throw new BadRequest(`'data' row ${i} must be an array of cells`);
    if (i === 0) continue; // the header is the client's, never read
    if (row.length > fields.length) throw new BadRequest(`'data' row ${i} has ${row.length} cells for ${fields.length} fields`);
    let chars = 0;
    for (let k = 0; k < row.length; k++) {
      const c: unknown = row[k];
      if (typeof c === 'string') chars += c.length;
      else if (c !== null && typeof c !== 'number' && typeof c !== 'boolean') throw new BadRequest(`'data' row ${i}, cell ${k}: a cell is a string, a number, a boolean or null`);
    }
    if (chars > MAX_RECORD_CHARS) throw recordTooLarge(`'data' row ${i}`);
    if (turns.due()) await turns.next();
  }

  let createFields: boolean[] = fields.map(() => false);
  if (b.create_fields !== undefined && b.create_fields !== null) {
    if (!Array.isArray(b.create_fields) || !b.create_fields.every((v) => typeof v === 'boolean')) {
      throw new BadRequest("'create_fields' must be an array of booleans, parallel to 'fields'");
    }
    if (b.create_fields.length !== fields.length) {
      throw new BadRequest(`'create_fields' has ${b.create_fields.length} entries for ${fields.length} fields: it is parallel to 'fields'`);
    }
    createFields = b.create_fields as boolean[];
  }
  let matchFields: string[] = [];
  if (b.match_fields !== undefined && b.match_fields !== null) {
    if (!Array.isArray(b.match_fields) || !b.match_fields.every((f) => typeof f === 'string' && f !== '' && f.length <= MAX_NAME)) {
      throw new BadRequest("'match_fields' must be an array of field paths");
    }
    matchFields = [...new Set(b.match_fields as string[])];
  }
  let dateFormat: DateFormat | null = null;
  if (b.date_format !== undefined && b.date_format !== null && b.date_format !== '') {
    if (typeof b.date_format !== 'string' || b.date_format.length > 40) throw new BadRequest("'date_format' must be a string such as 'DD/MM/YYYY'");
    dateFormat = parseDateFormat(b.date_format);
  }
  const flag = (key: string): boolean => {
    const v = b[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') throw new BadRequest(`'${key}' must be true or false`);
    return v;
  };
  let progressId: string | null = null;
  if (b.progress_id !== undefined && b.progress_id !== null) {
    if (typeof b.progress_id !== 'string' || !b.progress_id || b.progress_id.length > MAX_NAME) {
      throw new BadRequest(`'progress_id' must be a non-empty string of at most ${MAX_NAME} characters`);
    }
    progressId = b.progress_id;
  }
  return {
    fields: fields as string[], data: data as Cell[][], createFields, matchFields, dateFormat,
    dryRun: flag('dry_run'), atomic: flag('atomic'), progressId,
  };
}
