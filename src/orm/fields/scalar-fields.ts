/**
 * Scalar field types: one column each, no relation. Conversions here are the single place where
 * a wire value becomes a column value and back, so every path (API, model code, data files,
 * filters) validates the same way.
 */
import { Field, type FieldOptions, type RegistryEntry } from './field.js';
import { charactersBeyond, unstorableText } from './storable-text.js';
import { sanitizedHtml } from './sanitized-html.js';

/** The largest value of a PostgreSQL `integer` (Integer columns, record ids). */
export const INT32_MAX = 2_147_483_647;

export interface CharOptions extends FieldOptions {
  /** Maximum length in characters (default 255, spec §8.8). */
  max_length?: number;
  /**
   * A comma-separated list of names (`WindowAction.modes`, ARCHITECTURE §9): written as
   * `'List, Form'`, `'List,Form'` or a list (`['List', 'Form']`, YAML `[List, Form]`), stored and
   * read back as `'List, Form'` (items trimmed, empty ones dropped).
   */
  list?: boolean;
}

export class CharField extends Field<CharOptions> {
  readonly type = 'Char' as const;
  get maxLength(): number {
    return this.options.max_length ?? 255;
  }
  sqlType(): string {
    return `varchar(${this.maxLength})`;
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    const text = this.options.list ? this.listText(value) : this.textValue(value);
    const length = charactersBeyond(text, this.maxLength);
    if (length !== null) throw this.invalid(value, `at most ${this.maxLength} characters (got ${length})`);
    return text;
  }
  override toFilterValue(value: unknown): unknown {
    // A filter may compare with a longer text than the column holds (it simply matches nothing).
    if (value === null || value === undefined) return null;
    if (typeof value === 'boolean') throw this.invalid(value, 'a string');
    return this.textValue(value);
  }
  override describe(): RegistryEntry {
    return { ...super.describe(), max_length: this.maxLength };
  }
  /** The stored form of a `list` field's value, either form given (see `CharOptions.list`). */
  private listText(value: unknown): string {
    const items = Array.isArray(value) ? value : [value];
    if (!items.every((item) => typeof item === 'string')) throw this.invalid(value, 'a comma-separated string or a list of strings');
    return items.flatMap((item) => this.textValue(item).split(',')).map((item) => item.trim()).filter(Boolean).join(', ');
  }
}

/**
 * Unbounded text. Its size is bounded by the request body (`FF_BODY_LIMIT`), not by the field:
 * notes and descriptions have no natural maximum, and PostgreSQL stores up to 1 GB.
 */
export class TextField extends Field {
  readonly type = 'Text' as const;
  sqlType(): string {
    return 'text';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    return this.textValue(value);
  }
  override toFilterValue(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    if (typeof value === 'boolean') throw this.invalid(value, 'a string');
    return this.textValue(value);
  }
}

/**
 * Rich text as HTML, sanitised on every write (`sanitized-html.ts`): what is stored is what may be
 * rendered. Its type stays `Text` for filters, exports and imports; the description says `html`.
 */
export class HtmlField extends TextField {
  override toColumn(value: unknown): unknown {
    const text = super.toColumn(value);
    return typeof text === 'string' ? sanitizedHtml(text) : text;
  }
  override describe(): RegistryEntry {
    return { ...super.describe(), html: true };
  }
}

export class BooleanField extends Field {
  readonly type = 'Boolean' as const;
  sqlType(): string {
    return 'boolean';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    if (typeof value !== 'boolean') throw this.invalid(value, 'true or false');
    return value;
  }
}

export class IntegerField extends Field {
  readonly type = 'Integer' as const;
  sqlType(): string {
    return 'integer';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > INT32_MAX) {
      throw this.invalid(value, `an integer from -${INT32_MAX} to ${INT32_MAX}`);
    }
    return value === 0 ? 0 : value; // -0 is 0
  }
}

export interface FloatOptions extends FieldOptions {
  /** Decimal digits kept on write. */
  precision?: number;
}

export class FloatField extends Field<FloatOptions> {
  readonly type = 'Float' as const;
  sqlType(): string {
    return 'double precision';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.invalid(value, 'a number');
    const p = this.options.precision;
    const kept = p === undefined ? value : roundTo(value, p);
    return kept === 0 ? 0 : kept; // -0 (and what rounds to it) is 0
  }
  override fromColumn(raw: unknown): unknown {
    return raw === null || raw === undefined ? null : Number(raw);
  }
  override describe(): RegistryEntry {
    const entry = super.describe();
    if (this.options.precision !== undefined) entry.precision = this.options.precision;
    return entry;
  }
}

export interface MonetaryOptions extends FieldOptions {
  /** The ManyToOne(Currency) field giving the amount's currency (display precision and symbol). */
  currency_field?: string;
}

/** A decimal string a Monetary field accepts: digits, an optional fraction, an optional minus. */
const DECIMAL_RE = /^-?\d+(\.\d+)?$/;
/** Longest decimal string accepted (a double carries about 17 significant digits). */
const MAX_DECIMAL_TEXT = 64;

/**
 * An amount stored as NUMERIC, so decimal sums never drift (0.1 + 0.2 stays 0.3 in SQL). Read back
 * as a JSON number; it never converts between currencies.
 */
export class MonetaryField extends Field<MonetaryOptions> {
  readonly type = 'Monetary' as const;
  sqlType(): string {
    return 'numeric';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    if (typeof value === 'string') {
      // An exact decimal given as text ("19.99"): bounded so that it reads back as a JSON number
      // and stays within what NUMERIC accepts (a string of 20,000 zeros would overflow its scale).
      if (value.length > MAX_DECIMAL_TEXT || !DECIMAL_RE.test(value) || !Number.isFinite(Number(value))) {
        throw this.invalid(value, `a number (or a decimal string like "12.50" of at most ${MAX_DECIMAL_TEXT} characters)`);
      }
      return value;
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.invalid(value, 'a number');
    // Pass the shortest decimal form so NUMERIC stores exactly what the client meant (0.1, not 0.1000000000000000055).
    return String(value === 0 ? 0 : value);
  }
  override fromColumn(raw: unknown): unknown {
    return raw === null || raw === undefined ? null : Number(raw);
  }
  override describe(): RegistryEntry {
    const entry = super.describe();
    if (this.options.currency_field) entry.currency_field = this.options.currency_field;
    return entry;
  }
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Dates run from 0001-01-01 to 9999-12-31, the range of Python's `date` that Odoo users know
 * and of ISO 8601 without an expanded year. PostgreSQL would take year 294276 (and 4713 BC),
 * JavaScript's Date stops at 275760 and has a year 0 PostgreSQL lacks: a value outside this
 * range could not be read back the same way by every client.
 */
const DATE_RANGE = 'from 0001-01-01 to 9999-12-31';

/** Whether year/month/day name a real day of the proleptic Gregorian calendar (year ≥ 1). */
function isCalendarDay(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  // setUTCFullYear, unlike Date.UTC, does not read years 0–99 as 1900–1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

export class DateField extends Field {
  readonly type = 'Date' as const;
  sqlType(): string {
    return 'date';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined || value === '') return null;
    const m = typeof value === 'string' ? DATE_RE.exec(value) : null;
    if (!m) throw this.invalid(value, 'a date YYYY-MM-DD');
    if (+m[1]! < 1) throw this.invalid(value, `a date ${DATE_RANGE}`);
    if (!isCalendarDay(+m[1]!, +m[2]!, +m[3]!)) throw this.invalid(value, 'a real calendar date');
    return value;
  }
  override fromColumn(raw: unknown): unknown {
    if (raw === null || raw === undefined) return null;
    if (raw instanceof Date) {
      // The driver parsed a date-only value at local (pg) or UTC (PGlite) midnight; both engines are
      // configured to return strings, this is a guard.
      return raw.toISOString().slice(0, 10);
    }
    return String(raw);
  }
}

const DATETIME_RANGE = 'from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z';
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export class DatetimeField extends Field {
  readonly type = 'Datetime' as const;
  sqlType(): string {
    return 'timestamptz';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined || value === '') return null;
    if (value instanceof Date) {
      if (Number.isNaN(value.getTime())) throw this.invalid(String(value), 'a valid date-time');
      return this.inRange(value, value.toISOString());
    }
    const m = typeof value === 'string' ? DATETIME_RE.exec(value) : null;
    if (!m) throw this.invalid(value, 'an ISO 8601 date-time');
    const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
    if (+y! < 1) throw this.invalid(value, `a date-time ${DATETIME_RANGE}`);
    // Date.parse would roll 2024-02-30 over to March 1st: check the calendar and the clock first.
    if (!isCalendarDay(+y!, +mo!, +d!) || +h > 23 || +mi > 59 || +s > 59) {
      throw this.invalid(value, 'a real calendar date and time');
    }
    // Without an offset the value is UTC (never the server's local time zone).
    const offset = zone === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
    // Milliseconds are what a JavaScript Date keeps; more digits are cut rather than refused.
    const t = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${frac.slice(0, 4)}${offset}`);
    if (Number.isNaN(t)) throw this.invalid(value, 'an ISO 8601 date-time');
    return this.inRange(value, new Date(t).toISOString());
  }

  /** The instant, once its offset is applied, must still fall within years 0001–9999 (UTC). */
  private inRange(given: unknown, iso: string): string {
    if (!/^\d{4}-/.test(iso) || iso.startsWith('0000')) throw this.invalid(given instanceof Date ? iso : given, `a date-time ${DATETIME_RANGE}`);
    return iso;
  }
  override fromColumn(raw: unknown): unknown {
    if (raw === null || raw === undefined) return null;
    return (raw instanceof Date ? raw : new Date(String(raw))).toISOString();
  }
}

export interface SelectionOptions extends FieldOptions {
  /** Allowed values, or `[value, label]` pairs. */
  choices: readonly (string | readonly [string, string])[];
}

export class SelectionField extends Field<SelectionOptions> {
  readonly type = 'Selection' as const;
  get choices(): [string, string][] {
    return this.options.choices.map((c) => (typeof c === 'string' ? [c, c] : [c[0], c[1]]));
  }
  sqlType(): string {
    return 'varchar(255)';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined || value === '') return null;
    if (typeof value !== 'string' || !this.choices.some(([v]) => v === value)) {
      throw this.invalid(value, `one of ${this.choices.map(([v]) => v).join(', ')}`);
    }
    return value;
  }
  override toFilterValue(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    if (typeof value !== 'string') throw this.invalid(value, 'a string');
    return this.textValue(value);
  }
  override describe(): RegistryEntry {
    return { ...super.describe(), choices: this.choices };
  }
}

/** Raw bytes inline in the row; base64 on the wire. */
export class BinaryField extends Field {
  readonly type = 'Binary' as const;
  sqlType(): string {
    return 'bytea';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined || value === '' || value === false) return null;
    if (Buffer.isBuffer(value)) return value;
    if (typeof value !== 'string' || !/^[A-Za-z0-9+/\s]*={0,2}$/.test(value)) throw this.invalid(value, 'base64 data');
    return Buffer.from(value, 'base64');
  }
  override fromColumn(raw: unknown): unknown {
    if (raw === null || raw === undefined) return null;
    return Buffer.from(raw as Uint8Array).toString('base64');
  }
  override toFilterValue(value: unknown): unknown {
    throw this.invalid(value, 'no comparison (Binary fields can only be tested with __isnull)');
  }
}

/** Structured data (view architectures, settings payloads) kept as jsonb. */
export class JsonField extends Field {
  readonly type = 'Json' as const;
  sqlType(): string {
    return 'jsonb';
  }
  override toColumn(value: unknown): unknown {
    if (value === undefined || value === null) return null;
    const problem = unstorableJson(value);
    if (problem) throw this.invalid(value, `JSON data without ${problem}`);
    try {
      return JSON.stringify(value);
    } catch {
      throw this.invalid(value, 'JSON data without a value that contains itself');
    }
  }
  override toFilterValue(value: unknown): unknown {
    throw this.invalid(value, 'no comparison (Json fields can only be tested with __isnull)');
  }
}

/**
 * What in `value` jsonb cannot hold as given, or null: `JSON.stringify` would turn Infinity
 * (`1e400` in a request) into null and drop functions silently, and PostgreSQL refuses NUL and
 * lone surrogates in jsonb strings with an error naming no field. Walked without recursion: model
 * code may pass any depth.
 */
function unstorableJson(value: unknown): string | null {
  const stack: unknown[] = [value];
  const walked = new Set<object>();
  while (stack.length) {
    const v = stack.pop();
    switch (typeof v) {
      case 'undefined': case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(v)) return 'a number beyond ±1.8e308';
        continue;
      case 'string': {
        const problem = unstorableText(v);
        if (problem) return `${problem} in a text`;
        continue;
      }
      case 'object': {
        // An object that says how it is written (a Date) is written so; a shared one is walked once.
        if (v === null || walked.has(v) || typeof (v as { toJSON?: unknown }).toJSON === 'function') continue;
        walked.add(v);
        if (Array.isArray(v)) {
          stack.push(...v);
          continue;
        }
        for (const [key, child] of Object.entries(v)) {
          const problem = unstorableText(key);
          if (problem) return `${problem} in a key`;
          stack.push(child);
        }
        continue;
      }
      default:
        return `a ${typeof v}`;
    }
  }
  return null;
}

export function roundTo(value: number, digits: number): number {
  const f = 10 ** digits;
  const scaled = (value + Number.EPSILON * Math.sign(value)) * f;
  // Beyond 2^53 a double has no fractional digits left to round, and scaling a value near the
  // top of the range would overflow to Infinity.
  if (!Number.isFinite(scaled) || Math.abs(value) >= 2 ** 53) return value;
  return Math.round(scaled) / f;
}
