/**
 * API-key credentials on every /api route (spec §5, §3): missing, malformed, unknown, revoked,
 * expired and deactivated-account keys are refused with a 401 — immediately, on the very next
 * request — and a refused write writes nothing. Bodies are checked exactly on a non-dev app.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { buildApp } from '../../src/http/app.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ApiKey } from '../../modules/core/models/api_key.js';
import { ServiceAccount } from '../../modules/core/models/service_account.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let app: FastifyInstance;
let contactId: number;

beforeAll(async () => {
  t = await testDatabase('full');
  app = await buildApp(t.platform, { dev: false });
  contactId = (await t.run(() => Contact.create({ name: 'Existing' }))).id;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

/** A request with exactly the headers given (plus the database), on the non-dev app. */
function request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, authorization: string | undefined, body?: unknown) {
  const headers: Record<string, string> = { 'x-db-name': t.name };
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}

function newKey(options: { expiresAt?: string | null } = {}) {
  return t.run(() => createServiceAccountKey({ name: `key ${randomBytes(3).toString('hex')}`, groups: ['core.group_admin', 'core.group_user'], ...options }));
}

function contactCount(): Promise<number> {
  return t.run(() => Contact.query().with_archived().count());
}

/** Tries a create, an update and a delete with `authorization`; all must be 401 and change nothing. */
async function expectRefusedWrites(authorization: string | undefined, detail: string) {
  const before = await contactCount();
  const responses = [
    await request('POST', '/api/create/Contact', authorization, { name: 'Intruder' }),
    await request('PUT', `/api/update/Contact/${contactId}`, authorization, { name: 'Defaced' }),
    await request('DELETE', `/api/delete/Contact/${contactId}`, authorization),
  ];
  for (const res of responses) {
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail, error: 'AuthenticationError' });
  }
  expect(await contactCount()).toBe(before);
  const [existing] = await t.run(() => Contact.query({ id: contactId }).read(['name']));
  expect(existing?.name).toBe('Existing');
  const intruders = await t.run(() => Contact.query("Q(name='Intruder')").with_archived().count());
  expect(intruders).toBe(0);
}

const MISSING = 'Missing credential: send "Authorization: Bearer <credential>"';
const MALFORMED = 'Malformed Authorization header: expected "Bearer <credential>"';
const INVALID = 'Invalid, revoked or expired credential';

describe('credentials', () => {
  it('the template key works (baseline)', async () => {
    const res = await request('POST', '/api/query/Contact', `Bearer ${t.apiKey}`, { fields: ['name'] });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('a missing Authorization header is a 401', async () => {
    const res = await request('POST', '/api/query/Contact', undefined, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: MISSING, error: 'AuthenticationError' });
    const registry = await request('GET', '/api/get_registry/Contact', undefined);
    expect(registry.statusCode).toBe(401);
    await expectRefusedWrites(undefined, MISSING);
  });

  it('a malformed Authorization header is a 401', async () => {
    for (const header of ['Token abc', 'Bearer', 'Bearer ', `bearer${t.apiKey}`, `Basic ${Buffer.from('admin:admin').toString('base64')}x:`, `Bearer ${t.apiKey} extra`, 'Bearer a"b']) {
      const res = await request('POST', '/api/query/Contact', header, {});
      expect(res.statusCode, header).toBe(401);
      expect(res.json()).toEqual({ detail: MALFORMED, error: 'AuthenticationError' });
    }
    await expectRefusedWrites('Token abc', MALFORMED);
  });

  it('an unknown key is a 401', async () => {
    const unknown = `ff_${randomBytes(32).toString('base64url')}`;
    for (const header of [`Bearer ${unknown}`, `Bearer ${t.apiKey}x`, `Bearer ${t.apiKey.slice(0, -1)}`, 'Bearer not-a-key-at-all']) {
      const res = await request('POST', '/api/query/Contact', header, {});
      expect(res.statusCode, header).toBe(401);
      expect(res.json()).toEqual({ detail: INVALID, error: 'AuthenticationError' });
    }
    await expectRefusedWrites(`Bearer ${unknown}`, INVALID);
  });

  it('a revoked key is refused on the very next request', async () => {
    const { key, apiKeyId } = await newKey();
    const ok = await request('POST', '/api/create/Contact', `Bearer ${key}`, { name: 'Written before revocation' });
    expect(ok.statusCode, ok.body).toBe(200);
    await t.run(() => ApiKey.query({ id: apiKeyId }).update({ revoked_at: new Date().toISOString() }));
    const res = await request('POST', '/api/query/Contact', `Bearer ${key}`, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: INVALID, error: 'AuthenticationError' });
    await expectRefusedWrites(`Bearer ${key}`, INVALID);
    // Other keys are unaffected.
    expect((await request('POST', '/api/query/Contact', `Bearer ${t.apiKey}`, {})).statusCode).toBe(200);
  });

  it('an expired key is a 401; a key expiring in the future works', async () => {
    // Created valid (an expiry in the past is refused at creation), then expired.
    const past = await newKey({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    await t.run(() => ApiKey.query({ id: past.apiKeyId }).update({ expires_at: new Date(Date.now() - 60_000).toISOString() }));
    const res = await request('POST', '/api/query/Contact', `Bearer ${past.key}`, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: INVALID, error: 'AuthenticationError' });
    await expectRefusedWrites(`Bearer ${past.key}`, INVALID);

    const future = await newKey({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await request('POST', '/api/query/Contact', `Bearer ${future.key}`, {})).statusCode).toBe(200);
    // Expiry moved into the past: refused from the next request on.
    await t.run(() => ApiKey.query({ id: future.apiKeyId }).update({ expires_at: new Date(Date.now() - 1000).toISOString() }));
    expect((await request('POST', '/api/query/Contact', `Bearer ${future.key}`, {})).statusCode).toBe(401);
  });

  it("a key whose service account is deactivated is a 401, and works again once it is reactivated", async () => {
    const { key, serviceAccountId } = await newKey();
    expect((await request('POST', '/api/query/Contact', `Bearer ${key}`, {})).statusCode).toBe(200);
    await t.run(() => ServiceAccount.query({ id: serviceAccountId }).update({ active: false }));
    const res = await request('POST', '/api/query/Contact', `Bearer ${key}`, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: INVALID, error: 'AuthenticationError' });
    await expectRefusedWrites(`Bearer ${key}`, INVALID);
    await t.run(() => ServiceAccount.query(`Q(id=${serviceAccountId}) & Q(active=False)`).update({ active: true }));
    expect((await request('POST', '/api/query/Contact', `Bearer ${key}`, {})).statusCode).toBe(200);
  });

  it('revoked_at, expires_at and service_account are readonly: an update body cannot set them', async () => {
    const { key, apiKeyId } = await newKey();
    const past = new Date(Date.now() - 3600_000).toISOString();
    const res = await request('PUT', `/api/update/ApiKey/${apiKeyId}`, `Bearer ${key}`, { revoked_at: past, expires_at: past, service_account: null, name: 'renamed' });
    expect(res.statusCode, res.body).toBe(200);
    const [row] = await t.run(() => ApiKey.query({ id: apiKeyId }).read(['name', 'expires_at', 'service_account']));
    expect(row).toMatchObject({ name: 'renamed', expires_at: null, service_account: expect.objectContaining({ id: expect.any(Number) }) });
    expect((await request('POST', '/api/query/Contact', `Bearer ${key}`, {})).statusCode).toBe(200);
  });

  it('the credential is checked before the route: an unknown /api route without a key is a 401', async () => {
    const res = await request('GET', '/api/no/such/route', undefined);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: MISSING, error: 'AuthenticationError' });
    const outside = await request('GET', '/health', undefined);
    expect(outside.statusCode).toBe(200);
  });
});
