/**
 * The import route's own body limit (`FF_IMPORT_LIMIT`): a spreadsheet sent as JSON outgrows the
 * ordinary body limit (`FF_BODY_LIMIT`), so `/api/import` takes bodies up to its own, larger,
 * limit, and beyond it answers 413 naming that setting — while every other route keeps the
 * ordinary limit.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  t = await testDatabase('full');
  app = await buildApp(t.platform, { dev: false, bodyLimit: 4 * 1024, importLimit: 64 * 1024 });
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

function post(url: string, body: unknown) {
  return app.inject({
    method: 'POST', url, payload: JSON.stringify(body),
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
  });
}

/** An import of `n` contacts, about 40 bytes a row. */
const contacts = (n: number) => ({
  fields: ['name', 'email'],
  data: [['name', 'email'], ...Array.from({ length: n }, (_, i) => [`Limit person ${i}`, `limit${i}@example.com`])],
});

describe('the import body limit', () => {
  it('takes an import body above FF_BODY_LIMIT and below FF_IMPORT_LIMIT', async () => {
    const body = contacts(500);
    expect(JSON.stringify(body).length).toBeGreaterThan(4 * 1024);
    const res = await post('/api/import/Contact', body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().summary).toMatchObject({ created: 500, errors: 0 });
  });

  it('refuses one above FF_IMPORT_LIMIT with a 413 naming it, writing nothing', async () => {
    const res = await post('/api/import/Contact', contacts(3000));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ detail: 'The request body is larger than the configured limit (FF_IMPORT_LIMIT)', error: 'PayloadTooLarge' });
    const count = await post('/api/query/Contact', { counter: true, name_search: ['Limit person 2999'] });
    expect(count.json().count).toBe(0);
  });

  it('keeps FF_BODY_LIMIT on the other routes', async () => {
    const res = await post('/api/bulk-create/Contact', contacts(200).data.slice(1).map(([name]) => ({ name })));
    expect(res.statusCode).toBe(413);
    expect(res.json().detail).toMatch(/FF_BODY_LIMIT/);
  });
});
