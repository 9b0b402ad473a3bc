/**
 * The first-level subdivisions of every country as `CountryState` records, generated — never typed
 * by hand — from ISO 3166-2 as the iso-codes project maintains it (Debian's `iso-codes`,
 * https://salsa.debian.org/iso-codes-team/iso-codes, LGPL-2.1+, which follows the ISO Online
 * Browsing Platform's updates). Neither `iso-3166` (wooorm) nor `cldr-subdivisions-full` is a
 * dependency, so the list is a snapshot (iso-codes 4.15.0), `iso_3166_2.json` next to this file: every ISO 3166-2
 * entry as `[code, name, type, parent?]`, the hierarchy included. To refresh it from a newer
 * iso-codes: `npx tsx modules/core/data/country_states.ts [/usr/share/iso-codes/json/iso_3166-2.json]`.
 *
 * The rule, one level per country: a country's states are the top level of its ISO 3166-2
 * hierarchy — the entries with no parent. France gets its 13 metropolitan regions (Corse
 * included) and its overseas regions and collectivities, never the departments under them; the
 * United States its 50 states, DC and the 6 outlying areas; the United Kingdom its 3 countries and
 * Northern Ireland. Where ISO gives a second level only under some first-level entries (the
 * rayons of Nakhchivan in Azerbaijan, the districts of Vojvodina in Serbia), those stay out too.
 *
 * Names are ISO's (the local-language short names); an alternative given in brackets
 * (`Wales [Cymru GB-CYM]`, `Catalunya [Cataluña]`) is left out of the name. Identifiers are
 * `state_<code>`, lowercase with underscores: `state_fr_idf`, `state_us_ca`.
 * An upgrade that finds a state gone from ISO 3166-2 leaves it (as the loader never deletes).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { countryIdentifier } from './countries.js';

/** `[code, name, type]` of a top-level entry, `[code, name, type, parent]` otherwise (parent: a full code). */
export type IsoSubdivision = [code: string, name: string, type: string, parent?: string];

const SNAPSHOT = fileURLToPath(new URL('./iso_3166_2.json', import.meta.url));

type StateRecord = {
  data_type: 'CountryState';
  identifier: string;
  name: string;
  code: string;
  /** Identifier of the Country (`country_fr`). */
  country: string;
};

let snapshot: IsoSubdivision[] | undefined;
let generated: StateRecord[] | undefined;

/** Every ISO 3166-2 entry of the snapshot, the hierarchy included. */
export function isoSubdivisions(): IsoSubdivision[] {
  snapshot ??= (JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as { subdivisions: IsoSubdivision[] }).subdivisions;
  return snapshot;
}

/** The entries the seed holds: the top level of each country's hierarchy (see above). */
export function firstLevelSubdivisions(): IsoSubdivision[] {
  return isoSubdivisions().filter((s) => s[3] === undefined);
}

export function stateIdentifier(code: string): string {
  return `state_${code.toLowerCase().replace(/-/g, '_')}`;
}

export default function countryStateRecords(): StateRecord[] {
  generated ??= firstLevelSubdivisions().map(([code, name]) => ({
    data_type: 'CountryState',
    identifier: stateIdentifier(code),
    name: name.replace(/\s*\[[^\]]*\]\s*$/, ''),
    code,
    country: countryIdentifier(code.slice(0, 2)),
  }));
  return generated;
}

/** Writes the snapshot from iso-codes' `iso_3166-2.json` (parents there are bare or full codes). */
function regenerate(source: string): void {
  const raw = (JSON.parse(readFileSync(source, 'utf8')) as { '3166-2': { code: string; name: string; type: string; parent?: string }[] })['3166-2'];
  const entries = raw
    .map((s): IsoSubdivision => {
      const parent = s.parent && (s.parent.includes('-') ? s.parent : `${s.code.slice(0, 2)}-${s.parent}`);
      return parent ? [s.code, s.name, s.type, parent] : [s.code, s.name, s.type];
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const codes = new Set(entries.map((e) => e[0]));
  const orphan = entries.find((e) => e[3] !== undefined && !codes.has(e[3]));
  if (orphan) throw new Error(`${orphan[0]}: parent ${orphan[3]} is not an ISO 3166-2 code`);
  const body = entries.map((e) => `  ${JSON.stringify(e)}`).join(',\n');
  writeFileSync(SNAPSHOT, `{\n"source": ${JSON.stringify(`iso-codes ${source}`)},\n"license": "LGPL-2.1-or-later (iso-codes)",\n"subdivisions": [\n${body}\n]}\n`);
  console.log(`${entries.length} subdivisions, ${entries.filter((e) => e[3] === undefined).length} first-level → ${SNAPSHOT}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  regenerate(process.argv[2] ?? '/usr/share/iso-codes/json/iso_3166-2.json');
}
