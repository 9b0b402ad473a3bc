import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
beforeAll(async () => { t = await testDatabase('core'); });
afterAll(async () => { await t.close(); });

describe('smoke', () => {
  it('creates and queries a company', async () => {
    const created = await t.api('POST', '/api/create/Company', { name: 'Acme', ignored_key: 1 });
    expect(created.statusCode, created.body).toBe(200);
    const res = await t.api('POST', '/api/query/Company', { fields: ['name', 'parent.name'], filter_str: "Q(name__icontains='acm')" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([{ id: created.json().id, display_name: 'Acme', name: 'Acme', parent: null }]);
  });
});
