/**
 * API key administration over HTTP (spec §5, §3; credentials issue items 4 and 8): create (the
 * key shown once, only its SHA-256 hash stored), list (never the key), rotation on one account,
 * revocation, expiry, deactivating the account, scopes stored as given, and the rights that make
 * these routes administrators' only. Every refused request is checked to have written nothing.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { ApiKey } from '../../modules/core/models/api_key.js';
import { ServiceAccount } from '../../modules/core/models/service_account.js';
import { User } from '../../modules/core/models/user.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
/** Enough to read contacts (`/api/query/Contact`), nothing on ApiKey. */
const READER_GROUPS = ['core.group_user', 'contacts.group_contacts_user'];
/** A key of an ordinary user's account (`core.group_user`): no rights on ApiKey. */
let userKey: string;

beforeAll(async () => {
  t = await testDatabase('full');
  ({ key: userKey } = await t.run(() => createServiceAccountKey({ name: 'ordinary', groups: ['core.group_user'] })));
});
afterAll(async () => { await t?.close(); });

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const asAdmin = (method: Method, url: string, body?: unknown) => t.api(method, url, body);
const withKey = (key: string, method: Method, url: string, body?: unknown) =>
  t.api(method, url, body, { authorization: `Bearer ${key}` });
const queryStatus = async (key: string) => (await withKey(key, 'POST', '/api/query/Contact', { fields: ['name'] })).statusCode;
const unique = (label: string) => `${label} ${randomBytes(3).toString('hex')}`;

interface Created { id: number; key: string; prefix: string; service_account: number; expires_at: string | null }

async function create(body: Record<string, unknown>): Promise<Created> {
  const res = await asAdmin('POST', '/api/api-keys', body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The stored row, read directly from the table. */
async function storedRow(id: number): Promise<Record<string, unknown>> {
  const db = await t.platform.database(t.name);
  const { rows } = await sql<Record<string, unknown>>`SELECT * FROM api_key WHERE id = ${id}`.execute(db.executor);
  return rows[0]!;
}

function rowCounts() {
  return t.run(async () => ({
    accounts: await ServiceAccount.query().with_archived().count(),
    keys: await ApiKey.query().count(),
    users: await User.query().with_archived().count(),
  }));
}

/** A 400 with exactly `detail`, and nothing written. */
async function expectRefused(body: unknown, detail: string, status = 400, error = 'BadRequest') {
  const before = await rowCounts();
  const res = await asAdmin('POST', '/api/api-keys', body);
  expect(res.statusCode, res.body).toBe(status);
  expect({ detail: res.json().detail, error: res.json().error }).toEqual({ detail, error });
  expect(await rowCounts()).toEqual(before);
}

describe('creating a key', () => {
  it('returns the key once; only its SHA-256 hash is stored; it works at once', async () => {
    const before = await rowCounts();
    const name = unique('integration');
    const created = await create({ name, groups: ['core.group_admin', 'core.group_user'] });
    expect(Object.keys(created).sort()).toEqual(['expires_at', 'id', 'key', 'prefix', 'service_account']);
    expect(created.key).toMatch(/^ff_[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.key.slice(0, 10));
    expect(created.expires_at).toBeNull();

    const row = await storedRow(created.id);
    expect(row.key_hash).toBe(createHash('sha256').update(created.key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(created.key);
    expect(row).toMatchObject({ name, prefix: created.prefix, service_account_id: created.service_account, revoked_at: null, scopes: null });

    // A new login-less account with the groups asked for, and its User identity.
    expect(await rowCounts()).toEqual({ accounts: before.accounts + 1, keys: before.keys + 1, users: before.users + 1 });
    const [account] = await t.run(() => ServiceAccount.query({ id: created.service_account })
      .read(['name', 'active', 'groups.identifier', 'user.is_service_account', 'user.email']));
    expect(account).toMatchObject({ name, active: true, user: { is_service_account: true, email: null } });
    expect((account!.groups as { identifier: string }[]).map((g) => g.identifier).sort()).toEqual(['core.group_admin', 'core.group_user']);

    expect(await queryStatus(created.key)).toBe(200);
  });

  it('stores a future expiry (a bare date is midnight UTC) and refuses a past or malformed one', async () => {
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const created = await create({ name: unique('expiring'), groups: READER_GROUPS, expires_at: future });
    expect(created.expires_at).toBe(future);
    expect((await storedRow(created.id)).expires_at).toEqual(new Date(future));
    expect(await queryStatus(created.key)).toBe(200);

    const byDate = await create({ name: unique('dated'), groups: ['core.group_user'], expires_at: '2999-12-31' });
    expect(byDate.expires_at).toBe('2999-12-31T00:00:00.000Z');

    const past = new Date(Date.now() - 60_000).toISOString();
    await expectRefused({ name: 'late', groups: ['core.group_user'], expires_at: past }, `'expires_at' must be in the future (got ${past})`);
    const format = "'expires_at' must be an ISO 8601 date or date-time, e.g. 2030-01-31 or 2030-01-31T12:00:00Z";
    for (const bad of ['next week', '2030-02-30', '2030-01-31T25:00:00Z', '']) {
      await expectRefused({ name: 'malformed', groups: ['core.group_user'], expires_at: bad }, format);
    }
    await expectRefused({ name: 'number', groups: ['core.group_user'], expires_at: 1_900_000_000 }, "'expires_at' must be a string");
  });

  it('refuses bad names, groups and unknown options with exact messages, writing nothing', async () => {
    await expectRefused({ groups: ['core.group_user'] }, "'name' is required");
    await expectRefused({ name: '   ', groups: ['core.group_user'] }, "'name' is required");
    await expectRefused({ name: 'x'.repeat(256), groups: ['core.group_user'] }, "'name' may hold at most 255 characters");
    await expectRefused({ name: 'no groups' }, "'groups' needs at least one group identifier for a new service account");
    await expectRefused({ name: 'bad group', groups: ['core.group_user', 'core.no_such_group'] }, "No group with identifier 'core.no_such_group'");
    await expectRefused({ name: 'bad groups', groups: 'core.group_user' }, "'groups' must be an array of strings");
    await expectRefused({ name: 'typo', groups: ['core.group_user'], expire_at: '2999-01-01' },
      "Unknown key 'expire_at': expected name, groups, expires_at, service_account, scopes");
    await expectRefused([], 'The request body must be a JSON object');
  });

  it('stores and lists scopes as given, and refuses malformed ones with exact messages, writing nothing', async () => {
    const scopes = [{ model: 'Contact', perms: ['read', 'write'] }, { model: 'ProjectTask', perms: ['delete', 'read', 'create'] }];
    const created = await create({ name: unique('scoped'), groups: ['core.group_admin', 'core.group_user'], scopes });
    expect((await storedRow(created.id)).scopes).toEqual(scopes);
    const listed = (await asAdmin('GET', '/api/api-keys')).json().find((k: { id: number }) => k.id === created.id);
    expect(listed.scopes).toEqual(scopes);

    const ok = { name: 'bad scopes', groups: ['core.group_user'] };
    const cases: [unknown, string][] = [
      [{ model: 'Contact', perms: ['read'] }, "'scopes' must be an array of {model, perms} objects"],
      [[], "'scopes' must not be empty: omit it for a key with its account's full access"],
      [Array.from({ length: 201 }, () => ({ model: 'Contact', perms: ['read'] })), "'scopes' may hold at most 200 entries"],
      [['Contact'], 'scopes[0] must be an object {model, perms}'],
      [[{ model: 'Contact', perms: ['read'], fields: ['name'] }], "scopes[0] has an unknown key 'fields': expected model and perms"],
      [[{ perms: ['read'] }], 'scopes[0].model must be a model name'],
      [[{ model: 'Contact', perms: ['read'] }, { model: 'NoSuchModel', perms: ['read'] }], "scopes[1].model: model 'NoSuchModel' does not exist"],
      [[{ model: 'Contact', perms: ['read'] }, { model: 'Contact', perms: ['write'] }], "scopes[1].model: model 'Contact' is listed more than once"],
      [[{ model: 'Contact', perms: [] }], 'scopes[0].perms must be a non-empty array of read, write, create, delete'],
      [[{ model: 'Contact', perms: 'read' }], 'scopes[0].perms must be a non-empty array of read, write, create, delete'],
      [[{ model: 'Contact', perms: ['read', 'admin'] }], "scopes[0].perms: 'admin' is not one of read, write, create, delete"],
      [[{ model: 'Contact', perms: ['read', 'read'] }], "scopes[0].perms lists 'read' more than once"],
    ];
    for (const [bad, detail] of cases) await expectRefused({ ...ok, scopes: bad }, detail);
  });
});

describe('listing keys', () => {
  it('shows each key newest first with its account, never the key or its hash', async () => {
    const older = await create({ name: unique('older'), groups: ['core.group_user'] });
    const newer = await create({ name: unique('newer'), groups: ['core.group_user'], expires_at: '2999-01-01' });
    const res = await asAdmin('GET', '/api/api-keys');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain(older.key);
    expect(res.body).not.toContain(newer.key);
    expect(res.body).not.toContain(createHash('sha256').update(newer.key).digest('hex'));
    const list = res.json() as Record<string, any>[];
    for (const entry of list) {
      expect(Object.keys(entry).sort()).toEqual(
        ['created_date', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes', 'service_account']);
    }
    const ids = list.map((k) => k.id);
    expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
    const entry = list.find((k) => k.id === newer.id)!;
    const [account] = await t.run(() => ServiceAccount.query({ id: newer.service_account }).read(['name']));
    expect(entry).toMatchObject({
      prefix: newer.prefix, service_account: { id: newer.service_account, display_name: account!.name },
      expires_at: '2999-01-01T00:00:00.000Z', revoked_at: null, last_used_at: null, scopes: null,
    });
    expect(Date.parse(entry.created_date)).toBeGreaterThan(Date.now() - 600_000);
  });
});

describe('rotation and revocation', () => {
  it('adds a second key to an account; revoking one leaves the other working', async () => {
    const first = await create({ name: unique('rotating'), groups: ['core.group_admin', 'core.group_user'] });
    const before = await rowCounts();
    const second = await create({ name: 'rotating, next', service_account: first.service_account });
    expect(second.service_account).toBe(first.service_account);
    expect(await rowCounts()).toEqual({ ...before, keys: before.keys + 1 });
    expect(await queryStatus(first.key)).toBe(200);
    expect(await queryStatus(second.key)).toBe(200);

    const revoked = await asAdmin('DELETE', `/api/api-keys/${first.id}`);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toEqual({ id: first.id, revoked: true });
    // Refused on the very next request (the key was remembered by the requests above).
    const refused = await withKey(first.key, 'POST', '/api/query/Contact', {});
    expect(refused.statusCode).toBe(401);
    expect(refused.json().detail).toBe('Invalid, revoked or expired credential');
    expect(await queryStatus(second.key)).toBe(200);

    const revokedAt = (await storedRow(first.id)).revoked_at;
    expect(revokedAt).toBeInstanceOf(Date);
    const listed = (await asAdmin('GET', '/api/api-keys')).json().find((k: { id: number }) => k.id === first.id);
    expect(listed.revoked_at).toBe((revokedAt as Date).toISOString());
    // Idempotent: a repeated DELETE succeeds and keeps the first revocation time.
    const again = await asAdmin('DELETE', `/api/api-keys/${first.id}`);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual({ id: first.id, revoked: true });
    expect((await storedRow(first.id)).revoked_at).toEqual(revokedAt);
  });

  it('refuses groups with an existing account, an unknown account and a deactivated one', async () => {
    const base = await create({ name: unique('base'), groups: ['core.group_user'] });
    await expectRefused({ name: 'regroup', service_account: base.service_account, groups: ['core.group_admin'] },
      "'groups' cannot be combined with 'service_account': the new key carries that account's groups");
    await expectRefused({ name: 'nobody', service_account: 999_999 }, 'Service account 999999 does not exist', 404, 'NotFound');
    await t.run(() => ServiceAccount.query({ id: base.service_account }).update({ active: false }));
    await expectRefused({ name: 'asleep', service_account: base.service_account },
      `Service account ${base.service_account} is deactivated: reactivate it before adding a key`);
  });

  it('an unknown key id is a 404; a malformed one a 400', async () => {
    const res = await asAdmin('DELETE', '/api/api-keys/999999');
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toBe('API key 999999 does not exist');
    expect((await asAdmin('DELETE', '/api/api-keys/abc')).statusCode).toBe(400);
  });

  it("deactivating the account through the generic update refuses all its keys at once", async () => {
    const first = await create({ name: unique('deactivated'), groups: READER_GROUPS });
    const second = await create({ name: 'deactivated, next', service_account: first.service_account });
    expect(await queryStatus(first.key)).toBe(200);
    expect(await queryStatus(second.key)).toBe(200);
    const res = await asAdmin('PUT', `/api/update/ServiceAccount/${first.service_account}`, { active: false });
    expect(res.statusCode, res.body).toBe(200);
    expect(await queryStatus(first.key)).toBe(401);
    expect(await queryStatus(second.key)).toBe(401);
    expect(await queryStatus(t.apiKey)).toBe(200);
    // Still listed, with its (archived) account.
    const listed = (await asAdmin('GET', '/api/api-keys')).json().find((k: { id: number }) => k.id === first.id);
    expect(listed.service_account).toMatchObject({ id: first.service_account });
  });
});

describe('administrators only', () => {
  it("an ordinary user's key gets a 403 on every route, and nothing is written", async () => {
    const target = await create({ name: unique('target'), groups: READER_GROUPS });
    const before = await rowCounts();
    const attempts = [
      await withKey(userKey, 'POST', '/api/api-keys', { name: 'sneaky', groups: ['core.group_admin'] }),
      // Refused before the body is looked at: a user learns nothing from validation messages.
      await withKey(userKey, 'POST', '/api/api-keys', { name: 'sneaky', groups: 'core.group_admin', probe: true }),
      await withKey(userKey, 'POST', '/api/api-keys', { name: 'sneaky', groups: ['core.no_such_group'] }),
      await withKey(userKey, 'POST', '/api/api-keys', { name: 'rotate', service_account: target.service_account }),
      await withKey(userKey, 'GET', '/api/api-keys'),
      await withKey(userKey, 'DELETE', `/api/api-keys/${target.id}`),
    ];
    const details = attempts.map((res) => {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error).toBe('AccessError');
      return res.json().detail;
    });
    expect(details).toEqual([
      'You are not allowed to create API Key records',
      'You are not allowed to create API Key records',
      'You are not allowed to create API Key records',
      'You are not allowed to create API Key records',
      'You are not allowed to read API Key records',
      'You are not allowed to change API Key records',
    ]);
    expect(await rowCounts()).toEqual(before);
    expect((await storedRow(target.id)).revoked_at).toBeNull();
    expect(await queryStatus(target.key)).toBe(200);
    expect(await t.run(() => ServiceAccount.query("Q(name__in=['sneaky', 'rotate'])").with_archived().count())).toBe(0);
  });
});
