/**
 * Scalar field types: one column each, no relation. Conversions here are the single place where
 * a wire value becomes a column value and back, so every path (API, model code, data files,
 * filters) validates the same way.
 */
import { Field, type FieldOptions, type RegistryEntry } from './field.js';

const INT32_MAX = 2_147_483_647;

export interface CharOptions extends FieldOptions {
  /** Maximum length in characters (default 255, spec §8.8). */
  max_length?: number;
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
    if (typeof value === 'number' || typeof value === 'boolean') value = String(value);
    if (typeof value !== 'string') throw this.invalid(value, 'a string');
    if ([...value].length > this.maxLength) {
      throw this.invalid(value, `at most ${this.maxLength} characters (got ${[...value].length})`);
    }
    return value;
  }
  override toFilterValue(value: unknown): unknown {
    // A filter may compare with a longer text than the column holds (it simply matches nothing).
    if (value === null || value === undefined) return null;
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    throw this.invalid(value, 'a string');
  }
  override describe(): RegistryEntry {
    return { ...super.describe(), max_length: this.maxLength };
  }
}

export class TextField extends Field {
  readonly type = 'Text' as const;
  sqlType(): string {
    return 'text';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined) return null;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (typeof value !== 'string') throw this.invalid(value, 'a string');
    return value;
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
      throw this.invalid(value, 'an integer');
    }
    return value;
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
    return p === undefined ? value : roundTo(value, p);
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
    if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) return value;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.invalid(value, 'a number');
    // Pass the shortest decimal form so NUMERIC stores exactly what the client meant (0.1, not 0.1000000000000000055).
    return String(value);
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

export class DateField extends Field {
  readonly type = 'Date' as const;
  sqlType(): string {
    return 'date';
  }
  override toColumn(value: unknown): unknown {
    if (value === null || value === undefined || value === '') return null;
    const m = typeof value === 'string' ? DATE_RE.exec(value) : null;
    if (!m) throw this.invalid(value, 'a date YYYY-MM-DD');
    const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!));
    if (d.getUTCMonth() !== +m[2]! - 1 || d.getUTCDate() !== +m[3]!) throw this.invalid(value, 'a real calendar date');
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
      return value.toISOString();
    }
    const m = typeof value === 'string' ? DATETIME_RE.exec(value) : null;
    if (!m) throw this.invalid(value, 'an ISO 8601 date-time');
    const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
    // Date.parse would roll 2024-02-30 over to March 1st: check the calendar and the clock first.
    const day = new Date(Date.UTC(+y!, +mo! - 1, +d!));
    if (day.getUTCMonth() !== +mo! - 1 || day.getUTCDate() !== +d! || +h > 23 || +mi > 59 || +s > 59) {
      throw this.invalid(value, 'a real calendar date and time');
    }
    // Without an offset the value is UTC (never the server's local time zone).
    const offset = zone === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
    const t = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${frac}${offset}`);
    if (Number.isNaN(t)) throw this.invalid(value, 'an ISO 8601 date-time');
    return new Date(t).toISOString();
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
    return value;
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
    return value === undefined || value === null ? null : JSON.stringify(value);
  }
  override toFilterValue(value: unknown): unknown {
    throw this.invalid(value, 'no comparison (Json fields can only be tested with __isnull)');
  }
}

export function roundTo(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round((value + Number.EPSILON * Math.sign(value)) * f) / f;
}
