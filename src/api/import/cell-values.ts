/**
 * A spreadsheet cell read as the value of a field: text as people type it ("1,5" is not a number,
 * "yes" is true, a Selection by its value or its label), and dates in the request's
 * `date_format`, in ISO form, or as a spreadsheet serial number (days since 1899-12-30, what
 * Excel and LibreOffice store) — those two always parse (spec §4.8). A cell that cannot be read
 * throws `CellError` with the reason; the caller names the row, column and value.
 */
import { BadRequest, ValidationError } from '../../errors.js';
import type { Field } from '../../orm/fields/field.js';
import { SelectionField } from '../../orm/fields/scalar-fields.js';
import type { Cell } from './import-request.js';

export class CellError extends Error {}

/** A date format compiled from `DD/MM/YYYY`, `MM/DD/YYYY`, `YYYY-MM-DD`, `%d/%m/%Y` and the like. */
export interface DateFormat {
  readonly text: string;
  readonly pattern: RegExp;
  /** The capture group holding each part (1-based). */
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly shortYear: boolean;
}

const TOKEN = /YYYY|YY|MM|M|DD|D/g;
const STRFTIME: Record<string, string> = { '%Y': 'YYYY', '%y': 'YY', '%m': 'MM', '%d': 'DD' };

export function parseDateFormat(text: string): DateFormat {
  const upper = text.replace(/%[Yymd]/g, (t) => STRFTIME[t]!).toUpperCase();
  let source = '^';
  let last = 0;
  let group = 0;
  const parts: Record<string, number> = {};
  let shortYear = false;
  for (const m of upper.matchAll(TOKEN)) {
    source += escapeRegExp(upper.slice(last, m.index));
    const kind = m[0][0]!;
    if (parts[kind] !== undefined) throw new BadRequest(`'date_format' '${text}' names ${m[0]} twice`);
    parts[kind] = ++group;
    if (m[0] === 'YY') shortYear = true;
    source += kind === 'Y' ? (m[0] === 'YYYY' ? '(\\d{4})' : '(\\d{2})') : '(\\d{1,2})';
    last = m.index + m[0].length;
  }
  source += escapeRegExp(upper.slice(last));
  if (parts.Y === undefined || parts.M === undefined || parts.D === undefined || /[A-Z]/.test(upper.replace(TOKEN, ''))) {
    throw new BadRequest(`'date_format' '${text}' must name a year, a month and a day (YYYY or YY, MM, DD; e.g. 'DD/MM/YYYY')`);
  }
  // An optional time after the date (a Datetime cell).
  source += '(?:[T ]+(\\d{1,2}):(\\d{2})(?::(\\d{2}))?)?$';
  return { text, pattern: new RegExp(source), year: parts.Y, month: parts.M, day: parts.D, shortYear };
}

/** Blank: nothing, or only spaces. */
export function isBlank(cell: Cell | undefined): boolean {
  return cell === null || cell === undefined || (typeof cell === 'string' && cell.trim() === '');
}

/** A cell as the text a relation is looked up by (numbers as written, without a trailing `.0`). */
export function cellText(cell: Cell): string {
  return typeof cell === 'string' ? cell.trim() : String(cell);
}

/** The value of a non-blank `cell` for scalar `field`, ready for `field.toColumn` (throws CellError). */
export function cellValue(field: Field, cell: Cell, dateFormat: DateFormat | null): unknown {
  const text = typeof cell === 'string' ? cell.trim() : null;
  switch (field.type) {
    case 'Char':
    case 'Text':
      return typeof cell === 'string' ? cell : String(cell);
    case 'Integer': {
      const n = typeof cell === 'number' ? cell : text !== null && /^[+-]?\d+(\.0*)?$/.test(text) ? Number(text) : NaN;
      if (!Number.isInteger(n)) throw new CellError('not a whole number');
      return n;
    }
    case 'Float':
    case 'Monetary': {
      if (typeof cell === 'number') return cell;
      if (text !== null && NUMBER.test(text)) return field.type === 'Monetary' && /^-?\d+(\.\d+)?$/.test(text) ? text : Number(text);
      throw new CellError('not a number (write it with a decimal point, without thousands separators)');
    }
    case 'Boolean': {
      if (typeof cell === 'boolean') return cell;
      const word = String(cell).trim().toLowerCase();
      if (TRUE_WORDS.has(word)) return true;
      if (FALSE_WORDS.has(word)) return false;
      throw new CellError('not a boolean (true/false, yes/no, 1/0)');
    }
    case 'Selection': {
      const choices = (field as SelectionField).choices;
      const given = String(cell).trim();
      const exact = choices.find(([v]) => v === given);
      if (exact) return exact[0];
      const lower = given.toLowerCase();
      const loose = choices.find(([v, label]) => v.toLowerCase() === lower || label.toLowerCase() === lower);
      if (loose) return loose[0];
      throw new CellError(`not one of ${choices.map(([v, label]) => (v === label ? v : `${v} (${label})`)).join(', ').slice(0, 200)}`);
    }
    case 'Date':
      return dateValue(cell, dateFormat, false);
    case 'Datetime':
      return dateValue(cell, dateFormat, true);
    case 'Json': {
      if (typeof cell !== 'string') return cell;
      try {
        return JSON.parse(cell) as unknown;
      } catch {
        throw new CellError('not JSON');
      }
    }
    default:
      return cell;
  }
}

/**
 * `field.toColumn` of a cell's value, its refusal turned into a CellError carrying the reason: what
 * the field expected (the row error names the row, column and value itself), else the message.
 */
export function columnOf(field: Field, value: unknown): unknown {
  try {
    return field.toColumn(value);
  } catch (err) {
    if (err instanceof ValidationError) throw new CellError(err.expected === undefined ? err.message : `expected ${err.expected}`);
    throw err;
  }
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(['true', 'yes', '1', 'y', 'on', 'x']);
const FALSE_WORDS = new Set(['false', 'no', '0', 'n', 'off']);

/** Day 0 of spreadsheet serials: 1899-12-30 (so that 60 is Lotus's 1900-02-29, as Excel counts). */
const SERIAL_EPOCH = Date.UTC(1899, 11, 30);
const DAY_MS = 86_400_000;
/** 9999-12-31 as a serial: later serials are no date either format reads back. */
const MAX_SERIAL = 2_958_465;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;

function dateValue(cell: Cell, format: DateFormat | null, withTime: boolean): string {
  const expected = () => `not a ${withTime ? 'date-time' : 'date'} (expected ${format ? `${format.text}, ` : ''}ISO ${withTime ? 'YYYY-MM-DD HH:MM:SS' : 'YYYY-MM-DD'} or a spreadsheet date number)`;
  if (typeof cell === 'number' || (typeof cell === 'string' && /^\d+(\.\d+)?$/.test(cell.trim()) && !format?.pattern.test(cell.trim()))) {
    const serial = Number(cell);
    if (!(serial >= 1 && serial < MAX_SERIAL + 1)) throw new CellError(expected());
    const iso = new Date(SERIAL_EPOCH + Math.round(serial * DAY_MS / 1000) * 1000).toISOString();
    return withTime ? iso : iso.slice(0, 10);
  }
  if (typeof cell !== 'string') throw new CellError(expected());
  const text = cell.trim();
  if (ISO_DATE.test(text)) return withTime ? `${text}T00:00:00Z` : text;
  if (ISO_DATETIME.test(text)) return withTime ? text : text.slice(0, 10);
  const m = format?.pattern.exec(text);
  if (!format || !m) throw new CellError(expected());
  let year = Number(m[format.year]);
  if (format.shortYear) year += year < 69 ? 2000 : 1900; // as Python's %y
  const [month, day] = [Number(m[format.month]), Number(m[format.day])];
  // 31/01 read as MM/DD is no date of that format (rather than "not a real calendar date").
  const check = new Date(Date.UTC(2000, month - 1, day));
  check.setUTCFullYear(year);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) throw new CellError(expected());
  const date = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  const time = timeOf(m);
  return withTime ? `${date}T${time ?? '00:00:00'}Z` : date;
}

/** The optional time groups of a `DateFormat` match (always the last three groups). */
function timeOf(m: RegExpExecArray): string | null {
  const [h, mi, s] = m.slice(-3);
  if (h === undefined) return null;
  return `${h.padStart(2, '0')}:${mi}:${s ?? '00'}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
