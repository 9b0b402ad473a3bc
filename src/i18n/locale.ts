/**
 * A caller's locale: the `LanguageFormat` of a language's row (`languageFormatOf`) or of the
 * caller's language (`callerFormat`, resolved as `callerLanguage` does: explicit `lang`, context
 * `lang`, the user's `User.lang`, `Accept-Language`, `en`), and `formatValues`, which renders a
 * list of dates, times, numbers and amounts with one (`Language.format_values` serves it).
 *
 * Rows are read as the platform: a language's formats are nobody's secret, and a user with no
 * right on `Language` still sees values the way their language writes them.
 */
import { BadRequest } from '../errors.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';
import {
  deriveFormats, formatDate, formatDatetime, formatMonetary, formatNumber, formatTime, type CurrencyFormat, type LanguageFormat,
} from './format.js';
import { SOURCE_LANGUAGE, callerLanguageRow, type LanguageRequest } from './translations.js';

/** The `Language` fields a `LanguageFormat` holds. */
export const FORMAT_FIELDS = ['code', 'direction', 'date_format', 'time_format', 'decimal_separator', 'thousands_separator'] as const;

/** The most values one `formatValues` call renders. */
export const MAX_FORMAT_VALUES = 1000;

/** A resolved language's formats: what the helpers of `format.ts` take, with its direction spelled out. */
export interface LocaleFormat extends LanguageFormat {
  readonly direction: 'ltr' | 'rtl';
  readonly date_format: string;
  readonly time_format: string;
  readonly decimal_separator: string;
  readonly thousands_separator: string;
}

/**
 * The formats of `code`'s `Language` row, active or not (exact code, case-insensitive). A code
 * without a row gives the `en` row; a database without the `Language` model, ICU's `en` formats.
 */
export async function languageFormatOf(code: string): Promise<LocaleFormat> {
  const { registry } = currentEnv();
  if (!registry.has('Language')) return icuFormat(SOURCE_LANGUAGE);
  const wanted = [...new Set([code, code.toLowerCase(), SOURCE_LANGUAGE])];
  const rows = await withEnv({ su: true }, () =>
    new QuerySet(registry.meta('Language')).with_archived().filter({ code__in: wanted }).read([...FORMAT_FIELDS]));
  const row = rows.find((r) => String(r.code).toLowerCase() === code.toLowerCase()) ?? rows.find((r) => r.code === SOURCE_LANGUAGE);
  return row ? toFormat(row) : icuFormat(SOURCE_LANGUAGE);
}

/** The formats of the caller's language (see the module comment); the same queries as `callerLanguage`. */
export async function callerFormat(request: LanguageRequest = {}): Promise<LocaleFormat> {
  const row = await callerLanguageRow(request, FORMAT_FIELDS);
  return row && row.date_format ? toFormat(row) : icuFormat(SOURCE_LANGUAGE);
}

function toFormat(row: Record<string, unknown>): LocaleFormat {
  const text = (value: unknown, fallback: string) => (typeof value === 'string' ? value : fallback);
  return {
    code: String(row.code),
    direction: row.direction === 'rtl' ? 'rtl' : 'ltr',
    date_format: text(row.date_format, 'DD/MM/YYYY'),
    time_format: text(row.time_format, 'HH:mm'),
    decimal_separator: text(row.decimal_separator, '.'),
    thousands_separator: text(row.thousands_separator, ','),
  };
}

function icuFormat(code: string): LocaleFormat {
  return { code, ...deriveFormats(code) };
}

/** One value to render: `{type, value}`, plus `digits` for a number and `currency` for an amount. */
export type FormatEntry =
  | { type: 'date' | 'time' | 'datetime'; value: string }
  | { type: 'number'; value: number | string; digits?: number }
  | { type: 'monetary'; value: number | string; currency: number | string };

const TYPES = new Set(['date', 'time', 'datetime', 'number', 'monetary']);

/**
 * `entries` rendered with `lang`, in order (`format.ts`):
 *
 * - `date` / `time` / `datetime`: `YYYY-MM-DD`, `HH:mm[:ss]` or an ISO 8601 instant; an instant
 *   is shown in `timeZone` (an IANA name, default UTC);
 * - `number`: a number (or numeric text, as NUMERIC columns may come), `digits` 0–20 fixing the
 *   decimals;
 * - `monetary`: `value` in `currency` — a `Currency` id or its code (`EUR`) — rounded to it, its
 *   symbol on its side.
 *
 * Anything else is a `BadRequest` naming the entry (`values[2]`). Currencies are read in one
 * query, as the platform, archived (inactive) ones included.
 */
export async function formatValues(entries: unknown, lang: LanguageFormat, options: { timeZone?: unknown } = {}): Promise<string[]> {
  if (!Array.isArray(entries)) throw new BadRequest("'values' must be a list of {type, value} objects");
  if (entries.length > MAX_FORMAT_VALUES) throw new BadRequest(`'values' may hold at most ${MAX_FORMAT_VALUES} entries`);
  const timeZone = checkTimeZone(options.timeZone);
  const checked = entries.map((entry, index) => checkEntry(entry, `values[${index}]`));
  const currencies = await currenciesOf(checked);
  return checked.map((entry, index) => {
    const where = `values[${index}]`;
    switch (entry.type) {
      case 'date': case 'time': case 'datetime': {
        const render = entry.type === 'date' ? formatDate : entry.type === 'time' ? formatTime : formatDatetime;
        try {
          return render(entry.value, lang, { timeZone });
        } catch {
          throw new BadRequest(`${where}: ${JSON.stringify(entry.value).slice(0, 40)} is not a ${entry.type} (YYYY-MM-DD, HH:mm or ISO 8601)`);
        }
      }
      case 'number':
        return formatNumber(entry.value as number, lang, entry.digits === undefined ? {} : { digits: entry.digits });
      case 'monetary': {
        const currency = currencies.get(String(entry.currency).toUpperCase());
        if (!currency) throw new BadRequest(`${where}: currency ${JSON.stringify(entry.currency).slice(0, 40)} does not exist`);
        return formatMonetary(entry.value as number, currency, lang);
      }
    }
  });
}

function checkTimeZone(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  try {
    if (typeof value === 'string') return new Intl.DateTimeFormat('en', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    // Not a time zone.
  }
  throw new BadRequest(`'tz' must be an IANA time zone (Europe/Paris), got ${JSON.stringify(value).slice(0, 40)}`);
}

function checkEntry(entry: unknown, where: string): FormatEntry {
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new BadRequest(`${where} must be a {type, value} object`);
  const { type, value, digits, currency } = entry as Record<string, unknown>;
  if (typeof type !== 'string' || !TYPES.has(type)) {
    throw new BadRequest(`${where}.type must be one of date, time, datetime, number, monetary; got ${JSON.stringify(type ?? null).slice(0, 40)}`);
  }
  if (type === 'date' || type === 'time' || type === 'datetime') {
    if (typeof value !== 'string') throw new BadRequest(`${where}.value must be a text (YYYY-MM-DD, HH:mm or ISO 8601)`);
    return { type, value };
  }
  const number = typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) throw new BadRequest(`${where}.value must be a finite number`);
  if (type === 'number') {
    if (digits !== undefined && digits !== null && !(Number.isInteger(digits) && (digits as number) >= 0 && (digits as number) <= 20)) {
      throw new BadRequest(`${where}.digits must be an integer from 0 to 20`);
    }
    return { type, value: number, ...(typeof digits === 'number' ? { digits } : {}) };
  }
  const byId = typeof currency === 'number' && Number.isInteger(currency) && currency > 0;
  const byCode = typeof currency === 'string' && /^[A-Za-z]{3}$/.test(currency);
  if (!byId && !byCode) throw new BadRequest(`${where}.currency must be a Currency id or a 3-letter code`);
  return { type: 'monetary', value: number, currency: currency as number | string };
}

/** The currencies the entries name, keyed by id and by upper-case code. */
async function currenciesOf(entries: readonly FormatEntry[]): Promise<Map<string, CurrencyFormat>> {
  const ids = new Set<number>();
  const codes = new Set<string>();
  for (const e of entries) {
    if (e.type !== 'monetary') continue;
    if (typeof e.currency === 'number') ids.add(e.currency);
    else codes.add(e.currency.toUpperCase());
  }
  const out = new Map<string, CurrencyFormat>();
  const { registry } = currentEnv();
  if ((!ids.size && !codes.size) || !registry.has('Currency')) return out;
  const filter = [ids.size ? `Q(id__in=${JSON.stringify([...ids])})` : '', codes.size ? `Q(name__in=${JSON.stringify([...codes])})` : '']
    .filter(Boolean).join(' | ');
  const rows = await withEnv({ su: true }, () =>
    new QuerySet(registry.meta('Currency')).with_archived().filter(filter).read(['name', 'symbol', 'position', 'rounding']));
  for (const row of rows) {
    const currency = row as unknown as CurrencyFormat & { id: number };
    if (ids.has(currency.id)) out.set(String(currency.id), currency);
    if (codes.has(currency.name)) out.set(currency.name, currency);
  }
  return out;
}
