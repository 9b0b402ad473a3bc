/**
 * Scoped API keys (credentials issue item 8): `scopes` narrow a key below its account's groups —
 * never widen — and the key list shows when a key was last used (stamped at most once a minute).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { ApiKey } from '../../modules/core/models/api_key.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await testDatabase('full');
  // Created through the API, so it records who created it.
  expect((await t.api('POST', '/api/create/Contact', { name: 'Scoped reader target' })).statusCode).toBe(200);
});
afterAll(async () => { await t?.close(); });

const as = (key: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) =>
  t.api(method, url, body, { authorization: `Bearer ${key}` });

describe('scoped keys', () => {
  it('a scoped administrator key may do only what its scopes name', async () => {
    const { key } = await t.run(() => createServiceAccountKey({
      name: 'contacts reader', groups: ['core.group_admin', 'core.group_user'],
      scopes: [{ model: 'Contact', perms: ['read'] }, { model: 'ContactTag', perms: ['read', 'create'] }],
    }));
    const read = await as(key, 'POST', '/api/query/Contact', { fields: ['name', 'created_by'], filter_str: "Q(name='Scoped reader target')" });
    expect(read.statusCode, read.body).toBe(200);
    // A bare link to a model the key may not read (its scopes name no User) shows the id only: the
    // name is User data…
    expect(read.json()[0].created_by).toEqual({ id: expect.any(Number), display_name: null });
    const admin = await t.api('POST', '/api/query/Contact', { fields: ['created_by'], filter_str: "Q(name='Scoped reader target')" });
    expect(admin.json()[0].created_by).toEqual({ id: read.json()[0].created_by.id, display_name: expect.any(String) });
    // …but reading more of a User needs the right to read users.
    const deeper = await as(key, 'POST', '/api/query/Contact', { fields: ['created_by.email'] });
    expect(deeper.statusCode).toBe(403);
    expect(deeper.json().detail).toMatch(/not allowed to read User records/);
    const denied = [
      await as(key, 'POST', '/api/create/Contact', { name: 'Not allowed' }),
      await as(key, 'POST', '/api/query/ProjectTask', {}),
      await as(key, 'POST', '/api/query/ApiKey', {}),
      await as(key, 'GET', '/api/api-keys'),
    ];
    for (const res of denied) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error).toBe('AccessError');
    }
    expect((await as(key, 'POST', '/api/create/ContactTag', { name: 'scoped tag' })).statusCode).toBe(200);
    expect(await t.run(() => Contact.query("Q(name='Not allowed')").with_archived().count())).toBe(0);
  });

  it('scopes never widen: a scope naming a right the groups do not grant gives nothing', async () => {
    const { key } = await t.run(() => createServiceAccountKey({
      name: 'wishful', groups: ['core.group_user'], scopes: [{ model: 'ApiKey', perms: ['read', 'create'] }, { model: 'Company', perms: ['read', 'write'] }],
    }));
    expect((await as(key, 'POST', '/api/query/ApiKey', {})).statusCode).toBe(403);
    expect((await as(key, 'POST', '/api/query/Company', {})).statusCode).toBe(200);
    const [company] = (await as(key, 'POST', '/api/query/Company', {})).json();
    expect((await as(key, 'PUT', `/api/update/Company/${company.id}`, { name: 'Renamed' })).statusCode).toBe(403);
  });

  it('a key without scopes carries exactly its account\'s access', async () => {
    expect((await t.api('POST', '/api/query/ApiKey', {})).statusCode).toBe(200);
    expect((await t.api('POST', '/api/create/Contact', { name: 'Unscoped may' })).statusCode).toBe(200);
  });

  it('last_used_at is stamped on use, at most once a minute', async () => {
    const { key, apiKeyId } = await t.run(() => createServiceAccountKey({ name: 'stamped', groups: ['core.group_user', 'contacts.group_contacts_user'] }));
    const stamp = async () => {
      const [row] = await t.run(() => ApiKey.query({ id: apiKeyId }).read(['last_used_at']));
      return row!.last_used_at as string | null;
    };
    expect(await stamp()).toBeNull();
    expect((await as(key, 'POST', '/api/query/Contact', {})).statusCode).toBe(200);
    const first = await stamp();
    expect(first).not.toBeNull();
    expect(Math.abs(Date.parse(first!) - Date.now())).toBeLessThan(60_000);
    // Within the minute another request (even one resolved in full by another worker) keeps it.
    const other = await (await import('../../src/http/app.js')).buildApp(t.platform);
    try {
      const res = await other.inject({ method: 'POST', url: '/api/query/Contact', headers: { authorization: `Bearer ${key}`, 'x-db-name': t.name } });
      expect(res.statusCode).toBe(200);
    } finally {
      await other.close();
    }
    expect(await stamp()).toBe(first);
    // An old stamp is renewed by the next full resolution.
    await t.run(() => ApiKey.query({ id: apiKeyId }).update({ last_used_at: '2020-01-01T00:00:00Z' }));
    const third = await (await import('../../src/http/app.js')).buildApp(t.platform);
    try {
      await third.inject({ method: 'POST', url: '/api/query/Contact', headers: { authorization: `Bearer ${key}`, 'x-db-name': t.name } });
    } finally {
      await third.close();
    }
    expect(Date.parse((await stamp())!)).toBeGreaterThan(Date.parse('2021-01-01'));
    const listed = (await t.api('GET', '/api/api-keys')).json().find((k: any) => k.id === apiKeyId);
    expect(listed.last_used_at).toEqual(expect.any(String));
  });
});
