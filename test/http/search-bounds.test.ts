/**
 * What one search may cost (issue 10, item 7): PostgreSQL matches a pattern in time proportional
 * to its length for every row, so a 100,000-character name_search term kept a statement busy for
 * 10–27 s over the 3,715 states. Search terms and filter string literals are capped at
 * MAX_LITERAL_LENGTH characters (code points); beyond it the request is a 400 that names the
 * maximum, at the longest accepted length it stays cheap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequest } from '../../src/errors.js';
import { MAX_LITERAL_LENGTH } from '../../src/orm/query/filter-parser.js';
import { CountryState } from '../../modules/core/models/country.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await testDatabase('core');
});
afterAll(async () => {
  await t?.close();
});

const tooLong = 'a'.repeat(MAX_LITERAL_LENGTH + 1);
const longest = 'a'.repeat(MAX_LITERAL_LENGTH);

describe('name_search terms', () => {
  it(`are at most ${MAX_LITERAL_LENGTH} characters on /api/name_search, /api/query and in model code`, async () => {
    const detail = `A name_search term is too long (${MAX_LITERAL_LENGTH + 1} characters, at most ${MAX_LITERAL_LENGTH})`;
    const viaRoute = await t.api('POST', '/api/name_search/CountryState', { term: tooLong });
    expect(viaRoute.statusCode).toBe(400);
    expect(viaRoute.json()).toMatchObject({ error: 'BadRequest', detail });
    const viaQuery = await t.api('POST', '/api/query/CountryState', { name_search: ['Bayern', tooLong] });
    expect(viaQuery.json()).toMatchObject({ error: 'BadRequest', detail });
    const err = await t.failure(() => CountryState.query().search([tooLong]).count());
    expect(err).toBeInstanceOf(BadRequest);
    expect(err.message).toBe(detail);
    // A 100,000-character term is refused at once rather than searched for seconds.
    const started = Date.now();
    const huge = await t.api('POST', '/api/name_search/CountryState', { term: 'Baden-Württemberg '.repeat(5600) });
    expect(huge.statusCode).toBe(400);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('count characters, not UTF-16 units, and stay cheap at the longest accepted length', async () => {
    expect(await t.run(() => CountryState.query().count())).toBeGreaterThan(3000);
    const emoji = await t.api('POST', '/api/name_search/CountryState', { term: '😀'.repeat(MAX_LITERAL_LENGTH) });
    expect(emoji.statusCode, emoji.body.slice(0, 200)).toBe(200);
    const started = Date.now();
    for (const term of [longest, 'Bayern  '.repeat(MAX_LITERAL_LENGTH / 8)]) {
      const res = await t.api('POST', '/api/name_search/CountryState', { term });
      expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
      expect(res.json()).toEqual([]);
    }
    // Measured ~0.1 s each on the 2-core machine; a 100,000-character term took 10–27 s.
    expect(Date.now() - started).toBeLessThan(5000);
    const found = await t.api('POST', '/api/name_search/CountryState', { term: 'Bayern' });
    expect(found.json()).toEqual([expect.objectContaining({ display_name: 'Bayern' })]);
  });
});

describe('filter string literals', () => {
  it(`are at most ${MAX_LITERAL_LENGTH} characters: a 400 at the string's position naming the maximum`, async () => {
    const filter = `Q(code='DE-BY') | Q(name__icontains='${tooLong}')`;
    for (const [route, key] of [['/api/query/CountryState', 'filter_str'], ['/api/name_search/CountryState', 'filter']] as const) {
      const res = await t.api('POST', route, { [key]: filter });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        error: 'QuerySyntaxError',
        detail: `String '${'a'.repeat(30)}…' is too long (${MAX_LITERAL_LENGTH + 1} characters, at most ${MAX_LITERAL_LENGTH}) (at position ${filter.indexOf("'a")})`,
      });
    }
    const res = await t.api('POST', '/api/query/CountryState', { filter_str: `Q(code='DE-BY') | Q(name__icontains='${longest}')`, fields: ['name'] });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect(res.json()).toEqual([{ id: expect.any(Number), display_name: 'Bayern', name: 'Bayern' }]);
  });
});
