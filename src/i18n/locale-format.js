// @ts-check
/**
 * Locale formats: how a `Language` row's `date_format`, `time_format` and separators are derived
 * from ICU/CLDR (`Intl`), and the helpers that render a date, a time, a number and a monetary
 * amount the way a language says. One source for the server (reports, `Language.format_values`,
 * through `format.ts`) and the browser (lists and forms, through `web/client/format.js`): plain
 * JavaScript with JSDoc types, served as it is under `/web/shared/i18n/locale-format.js`
 * (src/http/routes/web-assets.ts), so it must stay free of Node and of TypeScript syntax, and
 * import only other shared sources.
 *
 * ## Pattern tokens
 *
 * `date_format` and `time_format` are patterns in the dayjs/moment token set (what a client can
 * hand to dayjs as is):
 *
 * | Token | Meaning | Token | Meaning |
 * |---|---|---|---|
 * | `YYYY` | year, 4 digits | `YY` | year, 2 digits |
 * | `MM` / `M` | month 01–12 / 1–12 | `DD` / `D` | day 01–31 / 1–31 |
 * | `HH` / `H` | hour 00–23 / 0–23 | `hh` / `h` | hour 01–12 / 1–12 |
 * | `KK` / `K` | hour 00–11 / 0–11 | `kk` / `k` | hour 01–24 / 1–24 |
 * | `mm` / `m` | minute | `ss` / `s` | second |
 * | `a` | the language's day period (`AM`, `ص`, `오전`) | `[text]` | literal text |
 *
 * Any other character is literal. Patterns are Gregorian (a `th` or `fa` user writes Gregorian
 * dates in the Thai/Persian order and digits). CLDR's bidi marks stay in the literals (Arabic
 * puts U+200F RIGHT-TO-LEFT MARK after each number, so `DD‏/MM‏/YYYY` reads right to left).
 *
 * ## Rendering
 *
 * Numbers use the language's grouping sizes and digits from ICU (`١٢٣`, `१२३`, lakh grouping for
 * `hi`) with the row's `decimal_separator` / `thousands_separator`, so an administrator's change
 * of a separator shows. Date and time digits are the language's digits too. Instants are shown in
 * `timeZone` (UTC unless given; the browser passes its own). Right-to-left languages
 * (`direction: 'rtl'`): every helper returns its text wrapped in U+2067 RIGHT-TO-LEFT ISOLATE …
 * U+2069 POP DIRECTIONAL ISOLATE, so the value keeps its own order inside any paragraph (a
 * left-to-right page, a right-to-left page, a CSV cell); `direction` is on the row for the layout
 * itself. `stripIsolate()` removes the marks where the caller lays out text itself.
 */
import { roundToStep } from '../orm/round-to-step.js';

/**
 * What the formatting helpers need of a `Language` row.
 * @typedef {{
 *   readonly code: string,
 *   readonly direction?: 'ltr' | 'rtl' | null,
 *   readonly date_format?: string | null,
 *   readonly time_format?: string | null,
 *   readonly decimal_separator?: string | null,
 *   readonly thousands_separator?: string | null,
 * }} LanguageFormat
 */

/**
 * What `formatMonetary` needs of a `Currency` row: its ISO `name` shows when it has no `symbol`.
 * @typedef {{
 *   readonly name: string,
 *   readonly symbol?: string | null,
 *   readonly position?: 'Before' | 'After' | null,
 *   readonly rounding?: number | null,
 * }} CurrencyFormat
 */

/**
 * The derived locale fields of a `Language` row for a code.
 * @typedef {{
 *   direction: 'ltr' | 'rtl',
 *   date_format: string,
 *   time_format: string,
 *   decimal_separator: string,
 *   thousands_separator: string,
 * }} DerivedFormats
 */

/** @typedef {{timeZone?: string}} ZoneOption */

export const RLI = '\u2067';
export const PDI = '\u2069';
const NBSP = '\u00a0';

/** A known instant with every field distinct and below 10: 2001-02-03 04:05:06 UTC. */
const PROBE = new Date(Date.UTC(2001, 1, 3, 4, 5, 6));
const TOKEN_LETTERS = /[A-Za-z[\]]/;
const TOKEN = /\[([^\]]*)\]|YYYY|YY|MM|M|DD|D|HH|H|hh|h|KK|K|kk|k|mm|m|ss|s|a/g;

/**
 * `direction`, patterns and separators of `code`, from ICU/CLDR.
 * @param {string} code
 * @returns {DerivedFormats}
 */
export function deriveFormats(code) {
  const locale = /** @type {Intl.Locale & {getTextInfo?: () => {direction?: string}, textInfo?: {direction?: string}}} */ (new Intl.Locale(code));
  const info = locale.getTextInfo?.() ?? locale.textInfo;
  const number = new Intl.NumberFormat(code).formatToParts(1234567.89);
  return {
    direction: info?.direction === 'rtl' ? 'rtl' : 'ltr',
    date_format: deriveDatePattern(code),
    time_format: deriveTimePattern(code),
    decimal_separator: number.find((p) => p.type === 'decimal')?.value ?? '.',
    thousands_separator: number.find((p) => p.type === 'group')?.value ?? '',
  };
}

/**
 * The numeric date of `code` (`MM/DD/YYYY`, `DD.MM.YYYY`, `YYYY/MM/DD`…): CLDR's order and
 * separators for a 2-digit day and month and a full year (CLDR's short style would give `2/3/01`
 * in English, ambiguous across centuries).
 * @param {string} code
 * @returns {string}
 */
export function deriveDatePattern(code) {
  const parts = new Intl.DateTimeFormat(code, {
    year: 'numeric', month: '2-digit', day: '2-digit', timeZone: 'UTC', calendar: 'gregory',
  }).formatToParts(PROBE);
  return parts.map((p) => {
    if (p.type === 'year') return p.value.length <= 2 ? 'YY' : 'YYYY';
    if (p.type === 'month') return p.value.length === 2 ? 'MM' : 'M';
    if (p.type === 'day') return p.value.length === 2 ? 'DD' : 'D';
    return literal(p.value);
  }).join('');
}

/**
 * Hours and minutes the way `code` writes them (`h:mm a`, `HH:mm`, `a h:mm`…).
 * @param {string} code
 * @returns {string}
 */
export function deriveTimePattern(code) {
  // `timeStyle: 'short'` is CLDR's own short time; hour/minute options would have ECMA-402 force
  // a numeric hour (`4:05` where French writes `04:05`).
  const format = new Intl.DateTimeFormat(code, { timeStyle: 'short', timeZone: 'UTC', calendar: 'gregory' });
  const cycle = format.resolvedOptions().hourCycle ?? 'h23';
  const letter = { h11: 'K', h12: 'h', h23: 'H', h24: 'k' }[cycle] ?? 'H';
  return format.formatToParts(PROBE).map((p) => {
    if (p.type === 'hour') return p.value.length === 2 ? letter + letter : letter;
    if (p.type === 'minute') return p.value.length === 2 ? 'mm' : 'm';
    if (p.type === 'second') return p.value.length === 2 ? 'ss' : 's';
    if (p.type === 'dayPeriod') return 'a';
    return literal(p.value);
  }).join('');
}

/** @param {string} text */
function literal(text) {
  return TOKEN_LETTERS.test(text) ? `[${text.replace(/[[\]]/g, '')}]` : text;
}

/**
 * A date (`YYYY-MM-DD`, an ISO datetime, or a Date) in the language's `date_format`.
 * @param {string | Date} value @param {LanguageFormat} lang @param {ZoneOption} [options]
 * @returns {string}
 */
export function formatDate(value, lang, options = {}) {
  const pattern = lang.date_format || 'DD/MM/YYYY';
  return isolate(render(pattern, fieldsOf(value, options.timeZone), lang.code), lang);
}

/**
 * A time (`HH:mm[:ss]`, an ISO datetime, or a Date) in the language's `time_format`.
 * @param {string | Date} value @param {LanguageFormat} lang @param {ZoneOption} [options]
 * @returns {string}
 */
export function formatTime(value, lang, options = {}) {
  const pattern = lang.time_format || 'HH:mm';
  return isolate(render(pattern, fieldsOf(value, options.timeZone), lang.code), lang);
}

/**
 * A datetime: the date, a space, the time.
 * @param {string | Date} value @param {LanguageFormat} lang @param {ZoneOption} [options]
 * @returns {string}
 */
export function formatDatetime(value, lang, options = {}) {
  const fields = fieldsOf(value, options.timeZone);
  const text = `${render(lang.date_format || 'DD/MM/YYYY', fields, lang.code)} ${render(lang.time_format || 'HH:mm', fields, lang.code)}`;
  return isolate(text, lang);
}

/**
 * A number with the language's digits and grouping and the row's separators. `digits` fixes the
 * number of decimals (default: as many as the value has, at most 6 — `1234.5` → `1,234.5`).
 * @param {number} value @param {LanguageFormat} lang @param {{digits?: number}} [options]
 * @returns {string}
 */
export function formatNumber(value, lang, options = {}) {
  return isolate(numberText(value, lang, options.digits), lang);
}

/**
 * An amount in a currency: rounded to the currency's `rounding` (its decimals), with the
 * language's number format, the currency's `symbol` (its code when it has none) on the side its
 * `position` says. A symbol after the amount, or a symbol ending in a letter before it
 * (`CHF 12.50`), is separated by a no-break space; `$12.50` and `-$12.50` are not. A currency
 * with neither symbol nor code shows the amount alone.
 * @param {number} amount @param {CurrencyFormat} currency @param {LanguageFormat} lang
 * @returns {string}
 */
export function formatMonetary(amount, currency, lang) {
  const rounding = currency.rounding ?? null;
  const digits = rounding && rounding > 0 ? Math.max(0, Math.ceil(-Math.log10(rounding) - 1e-9)) : 2;
  const rounded = rounding ? roundToStep(amount, rounding) : amount;
  const number = numberText(Math.abs(rounded), lang, digits);
  const symbol = currency.symbol || currency.name;
  const minus = rounded < 0 ? minusSign(lang.code) : '';
  if (!symbol) return isolate(`${minus}${number}`, lang);
  const text = currency.position === 'After'
    ? `${minus}${number}${NBSP}${symbol}`
    : `${minus}${symbol}${/\p{L}$/u.test(symbol) ? NBSP : ''}${number}`;
  return isolate(text, lang);
}

/**
 * `text` without the isolate marks the helpers add for right-to-left languages.
 * @param {string} text
 * @returns {string}
 */
export function stripIsolate(text) {
  return text.startsWith(RLI) && text.endsWith(PDI) ? text.slice(1, -1) : text;
}

/** @param {string} text @param {LanguageFormat} lang */
function isolate(text, lang) {
  return lang.direction === 'rtl' ? `${RLI}${text}${PDI}` : text;
}

/** One number format per language and decimals: a list formats thousands of cells. */
/** @type {Map<string, Intl.NumberFormat>} */
const numberFormats = new Map();

/** @param {number} value @param {LanguageFormat} lang @param {number} [digits] */
function numberText(value, lang, digits) {
  const key = `${lang.code}|${digits ?? ''}`;
  let format = numberFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(lang.code, digits === undefined
      ? { maximumFractionDigits: 6 }
      : { minimumFractionDigits: digits, maximumFractionDigits: digits });
    numberFormats.set(key, format);
  }
  const decimal = lang.decimal_separator ?? '.';
  const group = lang.thousands_separator ?? ',';
  return format.formatToParts(value)
    .map((p) => (p.type === 'decimal' ? decimal : p.type === 'group' ? group : p.value)).join('');
}

/**
 * What the language writes before a negative number: its minus sign with CLDR's bidi mark (`\u200e-` in `ar`).
 * @param {string} code
 */
function minusSign(code) {
  const parts = new Intl.NumberFormat(code).formatToParts(-1);
  const integer = parts.findIndex((p) => p.type === 'integer');
  return parts.slice(0, integer).map((p) => p.value).join('') || '-';
}

/** @typedef {{year: number, month: number, day: number, hour: number, minute: number, second: number}} DateFields */

/** The calendar-field reader of each time zone (`''`: the runtime's own zone). */
/** @type {Map<string, Intl.DateTimeFormat>} */
const fieldReaders = new Map();

/**
 * Calendar fields of a value: plain `YYYY-MM-DD` / `HH:mm[:ss]` strings as written, instants in `timeZone` (default UTC).
 * @param {string | Date} value @param {string} [timeZone]
 * @returns {DateFields}
 */
function fieldsOf(value, timeZone = 'UTC') {
  if (typeof value === 'string') {
    const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    if (date) return { year: +date[1], month: +date[2], day: +date[3], hour: 0, minute: 0, second: 0 };
    const time = /^(\d{1,2}):(\d{2})(?::(\d{2}))?/.exec(value);
    if (time) return { year: 1970, month: 1, day: 1, hour: +time[1], minute: +time[2], second: +(time[3] ?? 0) };
    value = new Date(value);
  }
  if (Number.isNaN(value.getTime())) throw new RangeError('Invalid date');
  let reader = fieldReaders.get(timeZone);
  if (!reader) {
    reader = new Intl.DateTimeFormat('en-US', {
      timeZone, calendar: 'gregory', numberingSystem: 'latn', hourCycle: 'h23',
      year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    fieldReaders.set(timeZone, reader);
  }
  const parts = reader.formatToParts(value);
  /** @param {string} type */
  const get = (type) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour') % 24, minute: get('minute'), second: get('second') };
}

/** @param {string} pattern @param {DateFields} f @param {string} code */
function render(pattern, f, code) {
  const digits = localDigits(code);
  /** @param {number} n @param {number} width */
  const num = (n, width) => String(n).padStart(width, '0').replace(/\d/g, (d) => digits[+d] ?? d);
  return pattern.replace(TOKEN, (token, /** @type {string | undefined} */ text) => {
    if (text !== undefined) return text;
    switch (token) {
      case 'YYYY': return num(f.year, 4);
      case 'YY': return num(f.year % 100, 2);
      case 'MM': case 'M': return num(f.month, token.length);
      case 'DD': case 'D': return num(f.day, token.length);
      case 'HH': case 'H': return num(f.hour, token.length);
      case 'hh': case 'h': return num(f.hour % 12 || 12, token.length);
      case 'KK': case 'K': return num(f.hour % 12, token.length);
      case 'kk': case 'k': return num(f.hour || 24, token.length);
      case 'mm': case 'm': return num(f.minute, token.length);
      case 'ss': case 's': return num(f.second, token.length);
      default: return dayPeriod(code, f.hour);
    }
  });
}

/** @type {Map<string, string[]>} */
const digitCache = new Map();

/**
 * The language's ten digits (`0123456789`, `٠١٢٣٤٥٦٧٨٩`, `۰۱۲۳۴۵۶۷۸۹`…).
 * @param {string} code
 */
function localDigits(code) {
  let digits = digitCache.get(code);
  if (!digits) {
    const nf = new Intl.NumberFormat(code, { useGrouping: false });
    digits = Array.from({ length: 10 }, (_, d) => nf.format(d));
    digitCache.set(code, digits);
  }
  return digits;
}

/** @param {string} code @param {number} hour */
function dayPeriod(code, hour) {
  const parts = new Intl.DateTimeFormat(code, { hour: 'numeric', hourCycle: 'h12', timeZone: 'UTC' })
    .formatToParts(new Date(Date.UTC(2001, 1, 3, hour)));
  return parts.find((p) => p.type === 'dayPeriod')?.value ?? (hour < 12 ? 'AM' : 'PM');
}
