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
 * Identifiers are `country_<alpha-2>` (`country_fr`).
 *
 * Install time. Core installs for every new database, so its seed must be cheap. Loaded one record
 * at a time, 249 countries with their flags and ~3,700 states (`country_states.ts`) added about 5 s
 * to an install and 3.5 s to an upgrade. So the countries and the states are upserted here in bulk,
 * with the data loader's semantics (by identifier: missing records created, records whose values
 * differ from the seed written, nothing duplicated, nothing deleted), while the loader reads the
 * data files — before it upserts any record: one INSERT for the new countries, one per thousand
 * new states, the flags stored and their attachments created in one INSERT. What the loader still
 * does is what needs records of other files: the currency link (the currencies are created by
 * `currencies.ts`, after this file is read), returned as records for the countries whose link is
 * not yet right — all of them on a first install, none on an upgrade.
 *
 * An upgrade writes only what changed: a flag whose bytes are the same is left alone; a new
 * flag-icons release replaces the changed flags (the old attachment goes, as with any File write).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { sql } from 'kysely';
import { countries } from 'countries-list';
import { currencies } from 'countries-list/currencies';
import isoCountries from 'i18n-iso-countries';
import { currentEnv, type Model } from 'fieldforge';
import { sha256 } from '../../../src/files/content-address.js';
import { storeContent } from '../../../src/files/stored-content.js';
import { Attachment } from '../models/attachment.js';
import { Country } from '../models/country.js';

const MODULE = 'core';
const FLAGS_DIR = join(dirname(createRequire(import.meta.url).resolve('flag-icons/package.json')), 'flags', '4x3');
const FLAG_MIMETYPE = 'image/svg+xml';

interface SeedCountry {
  identifier: string;
  name: string;
  code: string;
  /** Identifier of the Currency, unqualified (`currency_eur`). */
  currency: string | null;
  flagName: string;
  flag: Buffer;
  flagChecksum: string;
}

type CurrencyLink = { data_type: 'Country'; identifier: string; currency: string | null };

let generated: SeedCountry[] | undefined;

/** The ISO 3166-1 alpha-2 codes the seed holds (see above), sorted. */
export function countryCodes(): string[] {
  const userAssigned = new Set(Object.entries(countries).filter(([, c]) => 'userAssigned' in c && c.userAssigned).map(([code]) => code));
  return Object.keys(isoCountries.getAlpha2Codes()).filter((code) => !userAssigned.has(code)).sort();
}

export function countryIdentifier(code: string): string {
  return `country_${code.toLowerCase()}`;
}

/** The seed, from the packages (computed once per process). */
export function seedCountries(): SeedCountry[] {
  generated ??= generate();
  return generated;
}

function generate(): SeedCountry[] {
  const codes = countryCodes();
  const short = new Map(codes.map((code) => [code, isoCountries.getName(code, 'en', { select: 'alias' }) ?? code]));
  const shared = new Set([...short.values()].filter((name, i, all) => all.indexOf(name) !== i));
  const iso4217 = new Set(Object.entries(currencies).filter(([, c]) => !c.withdrawn).map(([code]) => code));
  return codes.map((code) => {
    const currency = (countries as Record<string, { currency: string[] } | undefined>)[code]?.currency[0];
    const flag = readFileSync(join(FLAGS_DIR, `${code.toLowerCase()}.svg`));
    const name = short.get(code)!;
    return {
      identifier: countryIdentifier(code),
      name: shared.has(name) ? isoCountries.getName(code, 'en', { select: 'official' })! : name,
      code,
      currency: currency && iso4217.has(currency) ? `currency_${currency.toLowerCase()}` : null,
      flagName: `${code.toLowerCase()}.svg`,
      flag,
      flagChecksum: sha256(flag),
    };
  });
}

export default async function countryRecords(): Promise<CurrencyLink[]> {
  const { currencyOf } = await syncCountries();
  const currencyIds = await idsByIdentifier('Currency', seedCountries().flatMap((c) => (c.currency ? [`${MODULE}.${c.currency}`] : [])));
  return seedCountries()
    .filter((c) => currencyOf.get(c.identifier) !== (c.currency ? currencyIds.get(`${MODULE}.${c.currency}`) ?? -1 : null))
    .map((c) => ({ data_type: 'Country', identifier: c.identifier, currency: c.currency }));
}

const synced = new WeakMap<object, Promise<SyncedCountries>>();

interface SyncedCountries {
  /** Country id by unqualified identifier (`country_fr`). */
  ids: Map<string, number>;
  /** The currency id each country links to now. */
  currencyOf: Map<string, number | null>;
}

/**
 * Upserts the seeded countries and their flags in bulk (see above), once per unit of work — the
 * states' and groups' data files call it too, whichever the loader reads first.
 */
export function syncCountries(): Promise<SyncedCountries> {
  const trx = currentEnv().trx as object;
  let done = synced.get(trx);
  if (!done) {
    done = doSyncCountries();
    synced.set(trx, done);
  }
  return done;
}

async function doSyncCountries(): Promise<SyncedCountries> {
  const seed = seedCountries();
  const rows = await Country.query({ identifier__in: seed.map((c) => `${MODULE}.${c.identifier}`) })
    .read(['identifier', 'name', 'code', 'currency', 'flag']);
  const existing = new Map(rows.map((r) => [String(r.identifier).slice(MODULE.length + 1), r]));
  const flagIds = rows.map((r) => linkId(r.flag)).filter((id): id is number => id !== null);
  const flagChecksums = new Map(flagIds.length
    ? (await Attachment.query({ id__in: flagIds }).read(['checksum'])).map((a) => [a.id as number, String(a.checksum)])
    : []);

  // New countries: their flags stored and attached in one INSERT, the countries in another.
  const missing = seed.filter((c) => !existing.has(c.identifier));
  if (missing.length) {
    const attachments = await createFlagAttachments(missing);
    const created = await Country.create_many(missing.map((c, i) => ({
      identifier: `${MODULE}.${c.identifier}`, name: c.name, code: c.code, flag: attachments[i]!,
    })));
    // The attachments belong to their countries (as an upload to the File field would).
    await sql`UPDATE attachment SET record = c.id FROM country c
      WHERE c.flag_id = attachment.id AND attachment.id = ANY(${attachments}::int[])`.execute(currentEnv().trx);
    created.forEach((rec, i) => existing.set(missing[i]!.identifier, { id: rec.id, currency: null } as Record<string, unknown>));
  }
  // Existing countries: write what differs from the seed (nothing, on a usual upgrade).
  for (const c of seed) {
    const row = existing.get(c.identifier)!;
    if (missing.includes(c)) continue;
    const vals: Record<string, unknown> = {};
    if (row.name !== c.name) vals.name = c.name;
    if (row.code !== c.code) vals.code = c.code;
    const flagId = linkId(row.flag);
    if (flagId === null || flagChecksums.get(flagId) !== c.flagChecksum) vals.flag = flagUpload(c);
    if (Object.keys(vals).length) await (await Country.browse([row.id as number]))[0]!.write(vals);
  }
  return {
    ids: new Map([...existing].map(([identifier, r]) => [identifier, r.id as number])),
    currencyOf: new Map([...existing].map(([identifier, r]) => [identifier, linkId(r.currency)])),
  };
}

/** Stores the flags' bytes (once per content) and creates their public attachments; ids in order. */
async function createFlagAttachments(seed: SeedCountry[]): Promise<number[]> {
  // Writing the files dominates: overlap them (the lock statements queue on the one connection).
  const unique = [...new Map(seed.map((c) => [c.flagChecksum, c])).values()];
  const stored = new Map<string, Awaited<ReturnType<typeof storeContent>>>();
  for (let i = 0; i < unique.length; i += 32) {
    const batch = unique.slice(i, i + 32);
    const results = await Promise.all(batch.map((c) => storeContent(c.flag.toString('base64'))));
    batch.forEach((c, j) => stored.set(c.flagChecksum, results[j]!));
  }
  const created = await Attachment.create_many(seed.map((c) => {
    const { checksum, filepath, file_size } = stored.get(c.flagChecksum)!;
    return { name: c.flagName, mimetype: FLAG_MIMETYPE, is_public: true, checksum, filepath, file_size, model: 'Country', field: 'flag' };
  }));
  return created.map((a) => a.id);
}

function flagUpload(c: SeedCountry) {
  return { name: c.flagName, base64: c.flag.toString('base64'), mimetype: FLAG_MIMETYPE, is_public: true };
}

/** The id of a read ManyToOne/File value (an id, or `{id, display_name}`), or null. */
export function linkId(value: unknown): number | null {
  if (value === null || value === undefined || value === false) return null;
  if (typeof value === 'number') return value;
  return (value as { id?: number }).id ?? null;
}

/** Ids of the records of `model` with these (qualified) identifiers. */
export async function idsByIdentifier(model: string, identifiers: string[]): Promise<Map<string, number>> {
  if (!identifiers.length) return new Map();
  const cls = currentEnv().registry.meta(model).cls as unknown as typeof Model;
  const rows = await cls.query({ identifier__in: [...new Set(identifiers)] }).with_archived().read(['identifier']);
  return new Map(rows.map((r) => [String(r.identifier), r.id as number]));
}
