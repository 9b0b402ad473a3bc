/**
 * Every current ISO 4217 currency as a `Currency` record, generated — never typed by hand — from
 * `countries-list` (the maintained ISO 4217 code list with minor units, withdrawn codes flagged)
 * and Node's ICU (CLDR symbols, names and number patterns):
 *
 * - the set: the package's codes that are not `withdrawn` (funds, metals and XXX/XTS included,
 *   as ISO 4217 lists them);
 * - `rounding`: 10^-(ISO minor units). ISO gives no minor unit ("N.A.") for metals, units of
 *   account and XXX/XTS; the package writes those as 0, which would round gold to whole ounces, so
 *   where it says 0 and CLDR does not, CLDR's digits (2) are taken;
 * - `symbol`: the English narrow symbol (`$`, `€`, `¥`, `zł`; the code when CLDR has none);
 * - `position`: where the symbol goes in the formats of the locales that use the currency (the
 *   first language of each country whose currency it is, `de-AT`, `fr-FR`…), by majority, ties and
 *   country-less codes `Before`. English alone would put every symbol before the amount; this
 *   gives `1,00 €` but `$1.00`, `CHF 1.00`, `¥1`;
 * - `plural`: the English plural name (`US dollars`).
 *
 * `active` is not part of the records: every currency is created inactive (the field's default),
 * and an upgrade, which updates records by identifier, never switches off what a company or a
 * person switched on.
 */
import { countries } from 'countries-list';
import { currencies } from 'countries-list/currencies';

type CurrencyRecord = {
  data_type: 'Currency';
  identifier: string;
  name: string;
  symbol: string;
  rounding: number;
  position: 'Before' | 'After';
  plural: string;
};

let generated: CurrencyRecord[] | undefined;

export default function currencyRecords(): CurrencyRecord[] {
  generated ??= generate();
  return generated;
}

function generate(): CurrencyRecord[] {
  const locales = localesByCurrency();
  return Object.entries(currencies)
    .filter(([, data]) => !data.withdrawn)
    .map(([code, data]) => ({
      data_type: 'Currency',
      identifier: `currency_${code.toLowerCase()}`,
      name: code,
      symbol: part('en', code, 'narrowSymbol', 1, 'currency').slice(0, 10),
      rounding: 10 ** -minorUnits(code, data.decimals),
      position: position(code, locales.get(code) ?? []),
      plural: part('en', code, 'name', 2, 'currency'),
    }));
}

/** ISO minor units, or CLDR's digits where ISO has none (see above). */
function minorUnits(code: string, isoDecimals: number): number {
  const cldr = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
  return isoDecimals === 0 ? cldr : isoDecimals;
}

/** `de-AT`, `fr-FR`… for each country whose currencies include the code. */
function localesByCurrency(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [country, data] of Object.entries(countries)) {
    const locale = `${data.languages[0] ?? 'en'}-${country}`;
    for (const code of data.currency) out.set(code, [...(out.get(code) ?? []), locale]);
  }
  return out;
}

function position(code: string, locales: readonly string[]): 'Before' | 'After' {
  let after = 0;
  for (const locale of locales) {
    const types = new Intl.NumberFormat(locale, { style: 'currency', currency: code }).formatToParts(1).map((p) => p.type);
    if (types.indexOf('currency') > types.indexOf('integer')) after++;
  }
  return after * 2 > locales.length ? 'After' : 'Before';
}

function part(locale: string, code: string, currencyDisplay: 'narrowSymbol' | 'name', value: number, type: Intl.NumberFormatPartTypes): string {
  const parts = new Intl.NumberFormat(locale, { style: 'currency', currency: code, currencyDisplay }).formatToParts(value);
  return parts.find((p) => p.type === type)?.value ?? code;
}
