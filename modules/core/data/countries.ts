/**
 * Every ISO 3166-1 country as a `Country` record, generated — never typed by hand — from maintained
 * packages:
 *
 * - the set: the alpha-2 codes of `i18n-iso-countries` (ISO 3166-1), less the user-assigned codes
 *   `countries-list` flags (`XK`): 249 countries;
 * - `name`: the English short name of `i18n-iso-countries` (`United States`, `Russia`, `Czechia`),
 *   its official name where two countries would share the short one (the two Congos);
 * - `currency`: the first currency `countries-list` gives for the country (its legal tender; `USD`
 *   before `USN`, `CHF` before the WIR units), none where the package has none (Antarctica) or
 *   where the currency is not in the ISO 4217 seed (`data/currencies.ts`);
 * - `flag`: the 4:3 SVG of `flag-icons` (MIT), as a public attachment owned by the country.
 *
 * Identifiers are `country_<alpha-2>` (`country_fr`). The loader upserts the records by identifier
 * in bulk, like any data file's: an upgrade writes only what differs from the seed — a flag whose
 * bytes are the same is left alone; a new flag-icons release replaces the changed flags (the old
 * attachment goes, as with any File write).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { countries } from 'countries-list';
import { currencies } from 'countries-list/currencies';
import isoCountries from 'i18n-iso-countries';

const FLAGS_DIR = join(dirname(createRequire(import.meta.url).resolve('flag-icons/package.json')), 'flags', '4x3');

type CountryRecord = {
  data_type: 'Country';
  identifier: string;
  name: string;
  code: string;
  /** Identifier of the Currency (`currency_eur`), or null. */
  currency: string | null;
  /** The SVG as a File upload. */
  flag: { name: string; base64: string; mimetype: 'image/svg+xml'; is_public: true };
};

let generated: CountryRecord[] | undefined;

/** The ISO 3166-1 alpha-2 codes the seed holds (see above), sorted. */
export function countryCodes(): string[] {
  const userAssigned = new Set(Object.entries(countries).filter(([, c]) => 'userAssigned' in c && c.userAssigned).map(([code]) => code));
  return Object.keys(isoCountries.getAlpha2Codes()).filter((code) => !userAssigned.has(code)).sort();
}

export function countryIdentifier(code: string): string {
  return `country_${code.toLowerCase()}`;
}

export default function countryRecords(): CountryRecord[] {
  generated ??= generate();
  return generated;
}

function generate(): CountryRecord[] {
  const codes = countryCodes();
  const short = new Map(codes.map((code) => [code, isoCountries.getName(code, 'en', { select: 'alias' }) ?? code]));
  const shared = new Set([...short.values()].filter((name, i, all) => all.indexOf(name) !== i));
  const iso4217 = new Set(Object.entries(currencies).filter(([, c]) => !c.withdrawn).map(([code]) => code));
  return codes.map((code) => {
    const currency = (countries as Record<string, { currency: string[] } | undefined>)[code]?.currency[0];
    const flagName = `${code.toLowerCase()}.svg`;
    const name = short.get(code)!;
    return {
      data_type: 'Country',
      identifier: countryIdentifier(code),
      name: shared.has(name) ? isoCountries.getName(code, 'en', { select: 'official' })! : name,
      code,
      currency: currency && iso4217.has(currency) ? `currency_${currency.toLowerCase()}` : null,
      flag: { name: flagName, base64: readFileSync(join(FLAGS_DIR, flagName)).toString('base64'), mimetype: 'image/svg+xml', is_public: true },
    };
  });
}
