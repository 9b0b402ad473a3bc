/**
 * The format filters of report templates, writing values the way the caller's language does
 * (`i18n/format.ts`, the same helpers as `Language.format_values`):
 *
 * | filter | writes | example (fr) |
 * |---|---|---|
 * | `{{ record.date_order \| date }}` | a Date (or the date of a Datetime) in the language's date format | `09/03/2024` |
 * | `{{ record.created_date \| datetime }}` | date and time (UTC) | `09/03/2024 14:05` |
 * | `{{ line.quantity \| number }}`, `\| number: 2` | a number with the language's separators; fixed decimals when given | `1 234,5` |
 * | `{{ line.subtotal \| monetary: record.currency }}` | an amount rounded to the currency, with its symbol where the currency puts it | `1 234,56 €` |
 *
 * `date` with an argument keeps LiquidJS's strftime meaning (`{{ record.date_order | date: '%Y' }}`).
 * An empty value (null, missing) writes nothing. The language travels in the render's globals
 * (`FORMAT_GLOBAL`), so one engine serves callers of every language.
 */
import type { Liquid } from 'liquidjs';
import { formatDate, formatDatetime, formatMonetary, formatNumber, type CurrencyFormat } from '../i18n/format.js';
import type { LocaleFormat } from '../i18n/locale.js';
import { liquidJs } from './liquidjs.js';

/** The render global holding the caller's `LocaleFormat`. */
export const FORMAT_GLOBAL = '__format';

type FilterThis = { context: { globals: Record<string, unknown> } };

function formatOf(self: FilterThis): LocaleFormat {
  return self.context.globals[FORMAT_GLOBAL] as LocaleFormat;
}

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === '';
}

/** A currency read with `name`, `symbol`, `position`, `rounding` (what `report-data.ts` reads for every link to Currency), or a code. */
function currencyFormat(currency: unknown): CurrencyFormat {
  if (currency && typeof currency === 'object') {
    const c = currency as Record<string, unknown>;
    return {
      name: String(c.name ?? c.display_name ?? ''),
      symbol: typeof c.symbol === 'string' ? c.symbol : null,
      position: c.position === 'After' || c.position === 'Before' ? c.position : null,
      rounding: typeof c.rounding === 'number' ? c.rounding : 0.01,
    };
  }
  // A bare code: its symbol is the code, two decimals.
  return { name: typeof currency === 'string' ? currency : '', symbol: null, position: null, rounding: 0.01 };
}

/** Called with an engine, so LiquidJS is loaded (`liquidjs.ts`); this file itself must not load it (`FORMAT_GLOBAL` is read at start). */
export function registerReportFilters(liquid: Liquid): void {
  const builtinFilters = liquidJs.get().filters;
  liquid.registerFilter('date', function (this: FilterThis, value: unknown, ...args: unknown[]) {
    if (args.length) return (builtinFilters.date as (...a: unknown[]) => unknown).call(this, value, ...args);
    if (isEmpty(value)) return '';
    return formatDate(value instanceof Date ? value : String(value), formatOf(this));
  });
  liquid.registerFilter('datetime', function (this: FilterThis, value: unknown) {
    if (isEmpty(value)) return '';
    return formatDatetime(value instanceof Date ? value : String(value), formatOf(this));
  });
  liquid.registerFilter('number', function (this: FilterThis, value: unknown, digits?: unknown) {
    if (isEmpty(value) || !Number.isFinite(Number(value))) return '';
    const fixed = digits === undefined || digits === null ? undefined : Math.max(0, Math.min(20, Math.trunc(Number(digits))));
    return formatNumber(Number(value), formatOf(this), { digits: fixed });
  });
  liquid.registerFilter('monetary', function (this: FilterThis, value: unknown, currency?: unknown) {
    if (isEmpty(value) || !Number.isFinite(Number(value))) return '';
    return formatMonetary(Number(value), currencyFormat(currency), formatOf(this));
  });
}
