/**
 * Values as a person reads them: numbers, dates, datetimes and amounts in the user's language,
 * selection labels, and relations by their names. Dates, numbers and amounts are rendered by the
 * server's own formatter (`src/i18n/locale-format.js`, served under `/web/shared/`), so a list, a
 * form and a printed document agree; this module adds what the browser needs around it: a
 * language by its code, its record loaded once, instants in the browser's time zone.
 *
 * A language is given by its code (`en`, `fr`, `pt-BR`). Until its `Language` record has been
 * loaded (`loadLanguage`, which a view calls once), its formats are derived from the browser's
 * CLDR data the way the server derives the records, so the first paint is already right; the
 * record only adds what an administrator changed (a separator, a date pattern).
 */
import {
  deriveFormats, formatDate as formatDateIn, formatDatetime as formatDatetimeIn, formatMonetary as formatMonetaryIn,
  formatNumber as formatNumberIn,
} from 'fieldforge/web/shared/i18n/locale-format.js';
import { api } from './api.js';

/**
 * @typedef {import('fieldforge/web/shared/i18n/locale-format.js').LanguageFormat} LanguageFormat
 *
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

/** Instants show in the browser's own zone. */
const LOCAL_ZONE = { timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone };

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
    found = { code, ...deriveFormats(code) };
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
 * A number with the language's digits, grouping and separators. Without `digits`, as many
 * decimals as the value has (at most 6).
 * @param {number} n
 * @param {{digits?: number, lang?: string | LanguageFormat | null}} [options]
 */
export function formatNumber(n, { digits, lang } = {}) {
  return formatNumberIn(n, languageFormat(lang), { digits });
}

/**
 * An amount in a currency (see the server's `formatMonetary`); without a currency, the amount
 * with two decimals.
 * @param {number} amount
 * @param {CurrencyFormat | null | undefined} currency
 * @param {string | LanguageFormat | null} [lang]
 */
export function formatMonetary(amount, currency, lang) {
  const format = languageFormat(lang);
  if (!currency) return formatNumberIn(amount, format, { digits: 2 });
  return formatMonetaryIn(amount, { ...currency, name: currency.name ?? '' }, format);
}

/**
 * A date (`YYYY-MM-DD`) in the language's `date_format`, as written (no time zone shift); text
 * that is no date is shown as it is.
 * @param {string} iso @param {string | LanguageFormat | null} [lang]
 */
export function formatDate(iso, lang) {
  try {
    return formatDateIn(iso, languageFormat(lang), LOCAL_ZONE);
  } catch {
    return String(iso);
  }
}

/**
 * An instant in the browser's time zone: the language's date, a space, its time.
 * @param {string} iso @param {string | LanguageFormat | null} [lang]
 */
export function formatDatetime(iso, lang) {
  try {
    return formatDatetimeIn(iso, languageFormat(lang), LOCAL_ZONE);
  } catch {
    return String(iso);
  }
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
