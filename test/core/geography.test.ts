/**
 * Geography (spec §2.5): every ISO 3166-1 country with its currency and its SVG flag (a public
 * attachment served by the filestore route), the first-level ISO 3166-2 subdivisions as states —
 * one level per country, the top of the ISO hierarchy —, country groups linked through
 * `FKCountryGroup`, read rights for users, and an upgrade that duplicates nothing.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { countries as packageCountries } from 'countries-list';
import isoCountries from 'i18n-iso-countries';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attachment } from '../../modules/core/models/attachment.js';
import { Country, CountryGroup, CountryState, FKCountryGroup } from '../../modules/core/models/country.js';
import { isoSubdivisions } from '../../modules/core/data/country_states.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

/** ISO 3166-1 as the package maintains it, user-assigned codes (XK) left out. */
const ISO_3166_1 = Object.keys(isoCountries.getAlpha2Codes())
  .filter((code) => !(packageCountries as Record<string, { userAssigned?: boolean }>)[code]?.userAssigned).sort();
const FLAGS = join(dirname(createRequire(import.meta.url).resolve('flag-icons/package.json')), 'flags', '4x3');
const EU = ['AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU',
  'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK'];

type Row = Record<string, unknown>;
const linkId = (v: unknown) => (v && typeof v === 'object' ? (v as { id: number }).id : (v as number | null));

let t: TestDatabase;
beforeAll(async () => {
  t = await testDatabase('core');
});
afterAll(async () => {
  await t?.close();
});

const countryRows = () => t.run(() => Country.query().order_by('code ASC').read(['identifier', 'name', 'code', 'currency.name', 'flag']));
const stateRows = () => t.run(() => CountryState.query().read(['identifier', 'name', 'code', 'country.code']));
async function statesOf(code: string): Promise<string[]> {
  return (await stateRows()).filter((s) => (s.country as Row).code === code).map((s) => String(s.code)).sort();
}

describe('countries', () => {
  it('holds every ISO 3166-1 country once, by alpha-2 code and identifier', async () => {
    expect(ISO_3166_1).toHaveLength(249);
    const rows = await countryRows();
    expect(rows.map((r) => r.code)).toEqual(ISO_3166_1);
    expect(rows.every((r) => r.identifier === `core.country_${String(r.code).toLowerCase()}`)).toBe(true);
    const byCode = new Map(rows.map((r) => [r.code, r.name]));
    expect(byCode.get('FR')).toBe('France');
    expect(byCode.get('DE')).toBe('Germany');
    // Distinct names: the two Congos are told apart.
    expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
  });

  it('links each country to its currency', async () => {
    const currency = new Map((await countryRows()).map((r) => [r.code, (r.currency as Row | null)?.name ?? null]));
    expect(currency.get('FR')).toBe('EUR');
    expect(currency.get('DE')).toBe('EUR');
    expect(currency.get('US')).toBe('USD');
    expect(currency.get('JP')).toBe('JPY');
    expect(currency.get('GB')).toBe('GBP');
    expect(currency.get('CH')).toBe('CHF');
    expect(currency.get('AQ')).toBeNull();
    expect([...currency.values()].filter((c) => c === null).length).toBeLessThan(3);
    // The reverse side: the euro's countries.
    const euro = await t.run(async () => (await Country.query({ currency__name: 'EUR' }).read(['code'])).map((r) => r.code));
    expect(euro).toEqual(expect.arrayContaining(['FR', 'DE', 'IT', 'ES', 'HR']));
    expect(euro).not.toContain('GB');
  });

  it('gives each country its flag-icons SVG as a public attachment it owns', async () => {
    const rows = await countryRows();
    const flagIds = rows.map((r) => linkId(r.flag));
    expect(flagIds.every((id) => typeof id === 'number')).toBe(true);
    expect(new Set(flagIds).size).toBe(rows.length);
    const atts = await t.run(() => Attachment.query({ id__in: flagIds as number[] })
      .read(['name', 'mimetype', 'is_public', 'model', 'record', 'field', 'checksum', 'file_size']));
    const byId = new Map(atts.map((a) => [a.id, a]));
    for (const r of rows) {
      const a = byId.get(linkId(r.flag)!)!;
      const svg = readFileSync(join(FLAGS, `${String(r.code).toLowerCase()}.svg`));
      expect(a, String(r.code)).toMatchObject({
        name: `${String(r.code).toLowerCase()}.svg`, mimetype: 'image/svg+xml', is_public: true,
        model: 'Country', record: r.id, field: 'flag', file_size: svg.length,
        checksum: createHash('sha256').update(svg).digest('hex'),
      });
    }
  });

  it('serves a flag to anyone at /filestore/view/{id} as image/svg+xml', async () => {
    const fr = (await countryRows()).find((r) => r.code === 'FR')!;
    const res = await t.app.inject({ method: 'GET', url: `/filestore/view/${linkId(fr.flag)}`, headers: { 'x-db-name': t.name } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(res.rawPayload.equals(readFileSync(join(FLAGS, 'fr.svg')))).toBe(true);
    expect(res.body).toContain('<svg');
  });
});

describe('states', () => {
  it('holds the first-level ISO 3166-2 subdivisions, with their codes', async () => {
    const fr = await statesOf('FR');
    const metropolitan = ['FR-20R', 'FR-ARA', 'FR-BFC', 'FR-BRE', 'FR-CVL', 'FR-GES', 'FR-HDF', 'FR-IDF', 'FR-NAQ', 'FR-NOR', 'FR-OCC', 'FR-PAC', 'FR-PDL'];
    const overseas = ['FR-BL', 'FR-CP', 'FR-GF', 'FR-GP', 'FR-MF', 'FR-MQ', 'FR-NC', 'FR-PF', 'FR-PM', 'FR-RE', 'FR-TF', 'FR-WF', 'FR-YT'];
    expect(fr).toEqual([...metropolitan, ...overseas].sort());
    const us = await statesOf('US');
    expect(us).toHaveLength(57); // 50 states, DC, 6 outlying areas
    expect(us).toEqual(expect.arrayContaining(['US-CA', 'US-NY', 'US-TX', 'US-DC', 'US-PR', 'US-GU', 'US-UM']));
    expect(await statesOf('GB')).toEqual(['GB-ENG', 'GB-NIR', 'GB-SCT', 'GB-WLS']);
    expect(await statesOf('DE')).toHaveLength(16);
    expect(await statesOf('JP')).toHaveLength(47);
    const rows = await stateRows();
    const idf = rows.find((s) => s.code === 'FR-IDF')!;
    expect(idf).toMatchObject({ identifier: 'core.state_fr_idf', name: 'Île-de-France' });
    expect(rows.find((s) => s.code === 'US-CA')).toMatchObject({ identifier: 'core.state_us_ca', name: 'California' });
    // The alternative name in brackets is not part of the name.
    expect(rows.find((s) => s.code === 'GB-WLS')!.name).toBe('Wales');
    expect(rows.every((s) => s.code === String(s.code).toUpperCase() && String(s.code).startsWith(`${(s.country as Row).code}-`))).toBe(true);
  });

  it('never mixes levels: no department, county or rayon under its region in the same country', async () => {
    const rows = await stateRows();
    const codes = new Set(rows.map((s) => String(s.code)));
    // Departments (FR-75 Paris, FR-971 Guadeloupe), provinces (IT-RM, ES-M), English counties.
    for (const lower of ['FR-75', 'FR-01', 'FR-971', 'FR-6AE', 'IT-RM', 'ES-M', 'GB-KEN', 'BE-VAN', 'AZ-SAD']) expect(codes.has(lower), lower).toBe(false);
    // Against the whole ISO 3166-2 hierarchy: every state is at the top of its country's, and every
    // top-level entry is a state.
    const hierarchy = isoSubdivisions();
    expect(hierarchy.length).toBeGreaterThan(4500);
    const parentOf = new Map(hierarchy.map(([code, , , parent]) => [code, parent]));
    const children = rows.filter((s) => parentOf.get(String(s.code)) !== undefined).map((s) => s.code);
    expect(children).toEqual([]);
    expect(rows.every((s) => parentOf.has(String(s.code)))).toBe(true);
    const topLevel = hierarchy.filter(([, , , parent]) => parent === undefined).map(([code]) => code).sort();
    expect([...codes].sort()).toEqual(topLevel);
    expect(rows).toHaveLength(codes.size);
  });

  it('deletes a country\'s states with the country (CASCADE)', async () => {
    const left = await t.run(async () => {
      const lu = (await Country.query({ code: 'LU' }).first())!;
      expect(await CountryState.query({ country: lu.id }).count()).toBeGreaterThan(0);
      await lu.unlink();
      const n = await CountryState.query({ country: lu.id }).count();
      throw Object.assign(new Error('rollback'), { n });
    }).catch((err: { n?: number }) => err.n);
    expect(left).toBe(0);
  });
});

describe('country groups', () => {
  it('holds the European Union with its 27 members through FKCountryGroup', async () => {
    const { members, links } = await t.run(async () => {
      const eu = (await CountryGroup.query({ identifier: 'core.country_group_eu' }).first())!;
      expect(eu.name).toBe('European Union');
      const links = await FKCountryGroup.query({ country_group: eu.id }).read(['country.code']);
      const members = (await eu.countries).map((c) => c.code).sort();
      return { members, links: links.map((l) => (l.country as Row).code).sort() };
    });
    expect(members).toEqual(EU);
    expect(links).toEqual(EU);
    const groups = await t.run(async () => (await Country.query({ code: 'FR' }).read(['groups.name']))[0]!.groups as Row[]);
    expect(groups.map((g) => g.name)).toEqual(expect.arrayContaining(['European Union', 'Eurozone', 'Europe']));
  });

  it('derives the Eurozone and the continents from the package', async () => {
    const read = (identifier: string) => t.run(async () => {
      const g = (await CountryGroup.query({ identifier }).first())!;
      return (await g.countries).map((c) => c.code).sort();
    });
    const eurozone = await read('core.country_group_eurozone');
    expect(eurozone).toEqual(expect.arrayContaining(['FR', 'DE', 'HR']));
    expect(eurozone).not.toContain('SE');
    expect(eurozone).not.toContain('PL');
    expect(await read('core.country_group_eea')).toEqual([...EU, 'IS', 'LI', 'NO'].sort());
    const europe = await read('core.country_group_continent_eu');
    expect(europe).toEqual(expect.arrayContaining(['FR', 'NO', 'CH', 'GB']));
    expect(europe).not.toContain('US');
  });
});

describe('access', () => {
  it('lets a user read countries, states and groups but not change them', async () => {
    const key = (await t.run(() => createServiceAccountKey({ name: 'geo reader', groups: ['core.group_user'] }))).key;
    const as = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => t.api(method, url, body, { authorization: `Bearer ${key}` });
    for (const model of ['Country', 'CountryState', 'CountryGroup', 'FKCountryGroup']) {
      const res = await as('POST', `/api/query/${model}`, { fields: ['id'], limit: 1 });
      expect(res.statusCode, `${model}: ${res.body}`).toBe(200);
    }
    const created = await as('POST', '/api/create/Country', { name: 'Atlantis', code: 'AX9' });
    expect(created.statusCode).toBe(403);
    const admin = await t.api('POST', '/api/create/CountryGroup', { name: 'Benelux' });
    expect(admin.statusCode, admin.body).toBe(200);
    expect((await t.api('DELETE', `/api/delete/CountryGroup/${admin.json().id}`)).statusCode).toBe(200);
  });
});

describe('upgrade', () => {
  it('updates by identifier: nothing is duplicated, flags are kept, a changed value is restored', async () => {
    const snapshot = () => t.run(async () => ({
      countries: (await Country.query().order_by('id ASC').read(['identifier', 'name', 'currency', 'flag'])).map((r) => JSON.stringify(r)),
      states: await CountryState.query({ identifier__startswith: 'core.' }).count(),
      groups: await CountryGroup.query().count(),
      links: await FKCountryGroup.query().count(),
      flags: await Attachment.query({ model: 'Country' }).count(),
    }));
    const before = await snapshot();
    expect(before.states).toBeGreaterThan(3000);
    expect(before.flags).toBe(249);
    await t.run(async () => {
      await (await CountryState.query({ code: 'FR-IDF' }).first())!.write({ name: 'Paris region' });
      await (await CountryState.query({ code: 'FR-BRE' }).first())!.unlink();
      await (await Country.query({ code: 'JP' }).first())!.write({ currency: null });
      const eu = (await CountryGroup.query({ identifier: 'core.country_group_eu' }).first())!;
      await FKCountryGroup.query({ country_group: eu.id }).limit(1).delete();
    });
    await t.platform.install(t.name, { update: ['core'] });
    await t.platform.install(t.name, { update: ['core'] });
    const after = await snapshot();
    expect(after).toEqual(before);
    expect(await statesOf('FR')).toContain('FR-BRE');
    const idf = await t.run(async () => (await CountryState.query({ code: 'FR-IDF' }).first())!.name);
    expect(idf).toBe('Île-de-France');
    const flagsByCountry = await t.run(() => Attachment.query({ model: 'Country' }).read(['record']));
    expect(new Set(flagsByCountry.map((a) => a.record)).size).toBe(249);
  });

  it('replaces a flag whose bytes differ from the package\'s, and removes the old attachment', async () => {
    const { oldId, fr } = await t.run(async () => {
      const fr = (await Country.query({ code: 'FR' }).first())!;
      await fr.write({ flag: { name: 'fr.svg', base64: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64'), mimetype: 'image/svg+xml', is_public: true } });
      return { oldId: linkId((await Country.query({ id: fr.id }).read(['flag']))[0]!.flag)!, fr: fr.id };
    });
    await t.platform.install(t.name, { update: ['core'] });
    const { flag, exists } = await t.run(async () => {
      const flag = linkId((await Country.query({ id: fr }).read(['flag']))[0]!.flag)!;
      return { flag: (await Attachment.query({ id: flag }).read(['checksum', 'record']))[0]!, exists: await Attachment.query({ id: oldId }).exists() };
    });
    expect(flag.checksum).toBe(createHash('sha256').update(readFileSync(join(FLAGS, 'fr.svg'))).digest('hex'));
    expect(flag.record).toBe(fr);
    expect(exists).toBe(false);
    expect(await t.run(() => Attachment.query({ model: 'Country' }).count())).toBe(249);
  });
});
