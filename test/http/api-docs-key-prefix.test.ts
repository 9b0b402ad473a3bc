/**
 * The API reference tells readers how to send an API key (issue 25 item 9): the prefix it shows
 * (`Bearer ff_…`) is the one real keys have — it used to say `ffk_`, which no key ever had.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;

beforeAll(async () => { t = await testDatabase('core'); });
afterAll(async () => { await t?.close(); });

describe('the API reference on API keys', () => {
  it('shows the prefix real keys have, in its description and its bearer scheme', async () => {
    const shared = await t.api('POST', '/api/api-docs-shares', { name: 'prefix check' });
    expect(shared.statusCode, shared.body).toBe(200);
    const res = await t.app.inject({
      method: 'GET', url: '/api-docs/openapi.json', headers: { 'x-db-name': t.name, authorization: `Bearer ${shared.json().token}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    const doc = res.json();
    const { key } = await t.run(() => createServiceAccountKey({ name: 'prefix probe', groups: ['core.group_user'] }));
    const shown = /Authorization: Bearer ([A-Za-z0-9_]+)…/.exec(doc.info.description)?.[1];
    expect(shown, doc.info.description).toBeDefined();
    expect(key.startsWith(shown!)).toBe(true);
    expect(shown).toBe('ff_');
    expect(doc.components.securitySchemes.bearer.description).toBe('An API key (`ff_…`) or a session access token.');
    expect(res.body).not.toContain('ffk_');
  });
});
