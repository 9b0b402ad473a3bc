/**
 * Values as a person reads them: numbers, dates, datetimes and amounts in the user's language,
 * selection labels, and relations by their names. It renders exactly what the server's
 * `src/i18n/format.ts` renders for reports (same `Language` fields, same pattern tokens, same
 * rounding), so a list, a form and a printed document agree.
 *
 * A language is given by its code (`en`, `fr`, `pt-BR`). Until its `Language` record has been
 * loaded (`loadLanguage`, which a view calls once), its formats are derived from the browser's
 * CLDR data the way the server derives the records, so the first paint is already right; the
 * record only adds what an administrator changed (a separator, a date pattern).
 */
import { api } from './api.js';

/**
 * What formatting needs of a `Language` record.
 * @typedef {object} LanguageFormat
 * @property {string} code
 * @property {'ltr' | 'rtl'} [direction]
 * @property {string} [date_format]
 * @property {string} [time_format]
 * @property {string} [decimal_separator]
 * @property {string} [thousands_separator]
 */

/**
 * What `formatMonetary` needs of a `Currency` record.
 * @typedef {object} CurrencyFormat
 * @property {string} [name] ISO code, shown when there is no symbol
 * @property {string | null} [symbol]
 * @property {'Before' | 'After' | null} [position]
 * @property {number | null} [rounding]
 */

/**
 * A registry entry, as far as formatting reads it.
 * @typedef {object} FieldInfo
 * @property {string} type
 * @property {string} [name] the field's name (needed for `currency_field` lookups only)
 * @property {[string, string][]} [choices]
 * @property {number} [precision]
 * @property {string} [currency_field]
 */

const RLI = '\u2067';
const PDI = '\u2069';
const NBSP = '\u00a0';
/** 2001-02-03 04:05:06 UTC: every field distinct and below 10, as the server probes. */
const PROBE = new Date(Date.UTC(2001, 1, 3, 4, 5, 6));
const TOKEN_LETTERS = /[A-Za-z[\]]/;
const TOKEN = /\[([^\]]*)\]|YYYY|YY|MM|M|DD|D|HH|H|hh|h|KK|K|kk|k|mm|m|ss|s|a/g;

/** @type {Map<string, LanguageFormat>} */
const languages = new Map();
/** @type {Map<string, Promise<LanguageFormat>>} */
const loading = new Map();

/** @param {string | null | undefined} code */
function normalCode(code) {
  const text = (code || 'en').replace(/_/g, '-');
  try {
    return Intl.getCanonicalLocales(text)[0] ?? 'en';
  } catch {
    return 'en';
  }
}

/**
 * The formats of a language: the loaded record, else what CLDR says.
 * @param {string | LanguageFormat | null | undefined} lang
 * @returns {LanguageFormat}
 */
export function languageFormat(lang) {
  if (lang && typeof lang === 'object') return lang;
  const code = normalCode(lang);
  let found = languages.get(code);
  if (!found) {
    found = deriveFormats(code);
    languages.set(code, found);
  }
  return found;
}

/**
 * Loads the `Language` record of `code` once; later formatting uses it. Never fails: without the
 * record (not readable, not there) the derived formats stay.
 * @param {string | null | undefined} code
 * @returns {Promise<LanguageFormat>}
 */
export function loadLanguage(code) {
  const key = normalCode(code);
  let pending = loading.get(key);
  if (!pending) {
    pending = api
      .query('Language', {
        filter_str: `Q(code=${JSON.stringify(key)}) & Q(active__in=[True, False])`,
        fields: ['code', 'direction', 'date_format', 'time_format', 'decimal_separator', 'thousands_separator'],
        limit: 1,
      })
      .then((rows) => {
        const row = Array.isArray(rows) ? rows[0] : null;
        if (row) rememberLanguage({ ...row, code: key });
        return languageFormat(key);
      })
      .catch(() => languageFormat(key));
    loading.set(key, pending);
  }
  return pending;
}

/**
 * Installs a language's formats (a `Language` record the caller already has).
 * @param {LanguageFormat} record
 */
export function rememberLanguage(record) {
  const code = normalCode(record.code);
  const derived = deriveFormats(code);
  languages.set(code, {
    code,
    direction: record.direction ?? derived.direction,
    date_format: record.date_format || derived.date_format,
    time_format: record.time_format || derived.time_format,
    decimal_separator: record.decimal_separator ?? derived.decimal_separator,
    thousands_separator: record.thousands_separator ?? derived.thousands_separator,
  });
}

/**
 * Direction, patterns and separators of `code` from CLDR (what the server writes in `Language`).
 * @param {string} code
 * @returns {LanguageFormat}
 */
function deriveFormats(code) {
  const locale = /** @type {Intl.Locale & {getTextInfo?: () => {direction?: string}, textInfo?: {direction?: string}}} */ (new Intl.Locale(code));
  const info = locale.getTextInfo?.() ?? locale.textInfo;
  const number = new Intl.NumberFormat(code).formatToParts(1234567.89);
  return {
    code,
    direction: info?.direction === 'rtl' ? 'rtl' : 'ltr',
    date_format: datePattern(code),
    time_format: timePattern(code),
    decimal_separator: number.find((p) => p.type === 'decimal')?.value ?? '.',
    thousands_separator: number.find((p) => p.type === 'group')?.value ?? '',
  };
}

/** @param {string} code */
function datePattern(code) {
  const parts = new Intl.DateTimeFormat(code, { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: 'UTC', calendar: 'gregory' }).formatToParts(PROBE);
  return parts
    .map((p) => {
      if (p.type === 'year') return p.value.length <= 2 ? 'YY' : 'YYYY';
      if (p.type === 'month') return p.value.length === 2 ? 'MM' : 'M';
      if (p.type === 'day') return p.value.length === 2 ? 'DD' : 'D';
      return literal(p.value);
    })
    .join('');
}

/** @param {string} code */
function timePattern(code) {
  const format = new Intl.DateTimeFormat(code, { timeStyle: 'short', timeZone: 'UTC', calendar: 'gregory' });
  const cycle = format.resolvedOptions().hourCycle ?? 'h23';
  const letter = { h11: 'K', h12: 'h', h23: 'H', h24: 'k' }[cycle] ?? 'H';
  return format
    .formatToParts(PROBE)
    .map((p) => {
      if (p.type === 'hour') return p.value.length === 2 ? letter + letter : letter;
      if (p.type === 'minute') return p.value.length === 2 ? 'mm' : 'm';
      if (p.type === 'second') return p.value.length === 2 ? 'ss' : 's';
      if (p.type === 'dayPeriod') return 'a';
      return literal(p.value);
    })
    .join('');
}

/** @param {string} text */
function literal(text) {
  return TOKEN_LETTERS.test(text) ? `[${text.replace(/[[\]]/g, '')}]` : text;
}

/**
 * Text kept in its own direction inside any paragraph (right-to-left languages), as the server does.
 * @param {string} text @param {LanguageFormat} lang
 */
function isolate(text, lang) {
  return lang.direction === 'rtl' ? `${RLI}${text}${PDI}` : text;
}

/**
 * A number with the language's digits, grouping and separators. Without `digits`, as many
 * decimals as the value has (at most 6).
 * @param {number} n
 * @param {{digits?: number, lang?: string | LanguageFormat | null}} [options]
 */
export function formatNumber(n, { digits, lang } = {}) {
  const format = languageFormat(lang);
  return isolate(numberText(n, format, digits), format);
}

/** @type {Map<string, Intl.NumberFormat>} */
const numberFormats = new Map();

/** @param {number} value @param {LanguageFormat} lang @param {number} [digits] */
function numberText(value, lang, digits) {
  const key = `${lang.code}|${digits ?? ''}`;
  let nf = numberFormats.get(key);
  if (!nf) {
    nf = new Intl.NumberFormat(lang.code, digits === undefined ? { maximumFractionDigits: 6 } : { minimumFractionDigits: digits, maximumFractionDigits: digits });
    numberFormats.set(key, nf);
  }
  const decimal = lang.decimal_separator ?? '.';
  const group = lang.thousands_separator ?? ',';
  return nf
    .formatToParts(value)
    .map((p) => (p.type === 'decimal' ? decimal : p.type === 'group' ? group : p.value))
    .join('');
}

/**
 * An amount in a currency: rounded to the currency's `rounding`, the symbol (or code) on the side
 * its `position` says; a symbol after the amount, or ending in a letter before it (`CHF 12.50`),
 * is separated by a no-break space.
 * @param {number} amount
 * @param {CurrencyFormat | null | undefined} currency
 * @param {string | LanguageFormat | null} [lang]
 */
export function formatMonetary(amount, currency, lang) {
  const format = languageFormat(lang);
  if (!currency) return isolate(numberText(amount, format, 2), format);
  const rounding = currency.rounding ?? null;
  const digits = rounding && rounding > 0 ? Math.max(0, Math.ceil(-Math.log10(rounding) - 1e-9)) : 2;
  const rounded = rounding ? roundToStep(amount, rounding) : amount;
  const number = numberText(Math.abs(rounded), format, digits);
  const symbol = currency.symbol || currency.name || '';
  const minus = rounded < 0 ? minusSign(format.code) : '';
  if (!symbol) return isolate(`${minus}${number}`, format);
  const text = currency.position === 'After' ? `${minus}${number}${NBSP}${symbol}` : `${minus}${symbol}${/\p{L}$/u.test(symbol) ? NBSP : ''}${number}`;
  return isolate(text, format);
}

/** Half away from zero, ignoring binary noise (as the server's `roundToStep`). @param {number} value @param {number} step */
function roundToStep(value, step) {
  if (!step || !Number.isFinite(value)) return value;
  const size = Math.abs(step);
  const steps = Number((Math.abs(value) / size).toPrecision(15));
  const rounded = Math.sign(value) * Math.floor(steps + 0.5) * size;
  let decimals = 0;
  while (decimals < 15 && Math.abs(size * 10 ** decimals - Math.round(size * 10 ** decimals)) >= 1e-9 * size * 10 ** decimals) decimals++;
  const result = Number(rounded.toFixed(decimals));
  return result === 0 ? 0 : result;
}

/** @param {string} code */
function minusSign(code) {
  const parts = new Intl.NumberFormat(code).formatToParts(-1);
  const integer = parts.findIndex((p) => p.type === 'integer');
  return parts.slice(0, integer).map((p) => p.value).join('') || '-';
}

/**
 * A date (`YYYY-MM-DD`) in the language's `date_format`, as written (no time zone shift).
 * @param {string} iso @param {string | LanguageFormat | null} [lang]
 */
export function formatDate(iso, lang) {
  const format = languageFormat(lang);
  const fields = dateFields(iso);
  if (!fields) return String(iso);
  return isolate(renderPattern(format.date_format || 'DD/MM/YYYY', fields, format.code), format);
}

/**
 * An instant in the browser's time zone: the language's date, a space, its time.
 * @param {string} iso @param {string | LanguageFormat | null} [lang]
 */
export function formatDatetime(iso, lang) {
  const format = languageFormat(lang);
  const fields = dateFields(iso);
  if (!fields) return String(iso);
  const text = `${renderPattern(format.date_format || 'DD/MM/YYYY', fields, format.code)} ${renderPattern(format.time_format || 'HH:mm', fields, format.code)}`;
  return isolate(text, format);
}

/**
 * @typedef {{year: number, month: number, day: number, hour: number, minute: number, second: number}} DateFields
 */

/** @type {Intl.DateTimeFormat | null} */
let localParts = null;

/**
 * Calendar fields: a plain date as written, an instant in the browser's zone.
 * @param {string} value
 * @returns {DateFields | null}
 */
function dateFields(value) {
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (date) return { year: +date[1], month: +date[2], day: +date[3], hour: 0, minute: 0, second: 0 };
  const instant = new Date(value);
  if (Number.isNaN(instant.getTime())) return null;
  localParts ??= new Intl.DateTimeFormat('en-US', {
    calendar: 'gregory', numberingSystem: 'latn', hourCycle: 'h23',
    year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  });
  const parts = localParts.formatToParts(instant);
  /** @param {string} type */
  const get = (type) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour') % 24, minute: get('minute'), second: get('second') };
}

/** @type {Map<string, string[]>} */
const digitCache = new Map();

/** @param {string} code */
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
  const parts = new Intl.DateTimeFormat(code, { hour: 'numeric', hourCycle: 'h12', timeZone: 'UTC' }).formatToParts(new Date(Date.UTC(2001, 1, 3, hour)));
  return parts.find((p) => p.type === 'dayPeriod')?.value ?? (hour < 12 ? 'AM' : 'PM');
}

/** @param {string} pattern @param {DateFields} f @param {string} code */
function renderPattern(pattern, f, code) {
  const digits = localDigits(code);
  /** @param {number} n @param {number} width */
  const num = (n, width) => String(n).padStart(width, '0').replace(/\d/g, (d) => digits[+d] ?? d);
  return pattern.replace(TOKEN, (token, text) => {
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

/**
 * The name a relation value shows: its `display_name`, else `#id`.
 * @param {unknown} link
 */
export function linkName(link) {
  if (!link || typeof link !== 'object') return '';
  const { display_name: name, id } = /** @type {{display_name?: string | null, id?: number}} */ (link);
  return name ?? (id === undefined ? '' : `#${id}`);
}

/**
 * The currency an amount is in: the record's `currency_field` link when it was read with its
 * `symbol`, `position` and `rounding` (`currency.symbol` … among the read paths).
 * @param {FieldInfo} field @param {Record<string, unknown> | undefined} record
 * @returns {CurrencyFormat | null}
 */
export function currencyOf(field, record) {
  const link = field.currency_field && record ? record[field.currency_field] : null;
  if (!link || typeof link !== 'object') return null;
  const c = /** @type {{symbol?: string | null, position?: 'Before' | 'After' | null, rounding?: number | null, name?: string, display_name?: string}} */ (link);
  if (c.symbol === undefined && c.rounding === undefined) return null;
  return { name: c.name ?? c.display_name ?? '', symbol: c.symbol ?? null, position: c.position ?? 'Before', rounding: c.rounding ?? null };
}

/**
 * Any field value as text: `''` for an empty value.
 * @param {FieldInfo} field the registry entry (with `name` for a Monetary's currency lookup)
 * @param {unknown} value
 * @param {{lang?: string | LanguageFormat | null, record?: Record<string, unknown>}} [options]
 * @returns {string}
 */
export function formatValue(field, value, { lang, record } = {}) {
  if (value === null || value === undefined || value === '') return '';
  switch (field.type) {
    case 'Boolean':
      return value ? 'Yes' : 'No';
    case 'Integer':
      return typeof value === 'number' ? formatNumber(value, { digits: 0, lang }) : String(value);
    case 'Float':
      return typeof value === 'number' ? formatNumber(value, { digits: field.precision, lang }) : String(value);
    case 'Monetary':
      return typeof value === 'number' ? formatMonetary(value, currencyOf(field, record), lang) : String(value);
    case 'Date':
      return formatDate(String(value), lang);
    case 'Datetime':
      return formatDatetime(String(value), lang);
    case 'Selection': {
      const choice = field.choices?.find(([key]) => key === value);
      return choice ? choice[1] : String(value);
    }
    case 'ManyToOne':
    case 'File':
      return linkName(value);
    case 'ManyToMany':
    case 'OneToMany':
      return Array.isArray(value) ? value.map(linkName).join(', ') : '';
    case 'Binary':
      return '';
    case 'Json':
      return typeof value === 'string' ? value : JSON.stringify(value);
    default:
      return String(value);
  }
}
