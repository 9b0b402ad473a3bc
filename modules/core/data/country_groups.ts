/**
 * A few useful `CountryGroup`s, linked to their countries through `FKCountryGroup`:
 *
 * - European Union: the 27 member states. No installed package lists the membership, so this is
 *   the one list kept here — the member states since 1 February 2020 (https://european-union.europa.eu,
 *   "EU countries");
 * - Eurozone: the EU members whose currency is the euro, derived from `countries-list`;
 * - European Economic Area: the EU plus Iceland, Liechtenstein and Norway (the EEA Agreement's
 *   EFTA parties);
 * - one group per continent, from `countries-list` (`continent`, names from its `continents`).
 *
 * The loader upserts the groups (an upgrade replaces each group's links with the current list
 * rather than adding to them, and leaves a group whose list did not change alone).
 */
import { continents, countries } from 'countries-list';
import { countryCodes, countryIdentifier } from './countries.js';

export const EUROPEAN_UNION = [
  'AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU',
  'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK',
] as const;
const EEA_EFTA = ['IS', 'LI', 'NO'] as const;

/** `countries`: identifiers of the countries (`country_fr`). */
type GroupRecord = { data_type: 'CountryGroup'; identifier: string; name: string; countries: string[] };

const data = countries as Record<string, { currency: string[]; continent: string } | undefined>;

export default function countryGroupRecords(): GroupRecord[] {
  const seeded = countryCodes();
  const group = (identifier: string, name: string, codes: readonly string[]): GroupRecord => ({
    data_type: 'CountryGroup', identifier, name, countries: [...codes].sort().map(countryIdentifier),
  });
  return [
    group('country_group_eu', 'European Union', EUROPEAN_UNION),
    group('country_group_eurozone', 'Eurozone', EUROPEAN_UNION.filter((code) => data[code]?.currency[0] === 'EUR')),
    group('country_group_eea', 'European Economic Area', [...EUROPEAN_UNION, ...EEA_EFTA]),
    ...Object.entries(continents).map(([code, name]) =>
      group(`country_group_continent_${code.toLowerCase()}`, name, seeded.filter((c) => data[c]?.continent === code))),
  ];
}
