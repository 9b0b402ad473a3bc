/**
 * A worker remembers what an API key or session resolved to and skips the look-up round trip, but
 * the database confirms it in the request's first statement (`auth/request-guard.ts`), comparing
 * the credential version that triggers move (`auth/credential-version.ts`). These
 * tests warm a key on a worker, change the world behind its back, and check that the very next
 * request through that worker gets exactly the answer the full look-up gives: revoked, expired,
 * deactivated → 401 (even for requests that would fail or read nothing); installing → 503; a new
 * registry or a changed account → served with the new state. Nothing is written by a refused
 * request.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { installRequestGuard } from '../../src/auth/request-guard.js';
import { openSession } from '../../src/auth/sessions.js';
import { bumpRegistryVersion, setInstalling } from '../../src/db/platform-state.js';
import { buildApp } from '../../src/http/app.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ApiKey } from '../../modules/core/models/api_key.js';
import { ServiceAccount } from '../../modules/core/models/service_account.js';
import { User } from '../../modules/core/models/user.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { READ_GUARD, WRITE_GUARD, carriesGuard } from '../support/guard-text.js';

let t: TestDatabase;
/** Two workers: separate apps, each with its own memory of keys, over one database. */
let workers: FastifyInstance[];

beforeAll(async () => {
  t = await testDatabase('full');
  workers = [await buildApp(t.platform, { dev: false }), await buildApp(t.platform, { dev: false })];
  // Warming reads one contact: a non-empty answer is what confirms the key within the SELECT.
  await t.run(() => Contact.create({ name: 'Someone' }));
});
afterAll(async () => {
  for (const w of workers ?? []) await w.close();
  await t?.close();
});

const INVALID = { detail: 'Invalid, revoked or expired credential', error: 'AuthenticationError' };

function call(worker: FastifyInstance, key: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
  return worker.inject({
    method, url,
    headers: { authorization: `Bearer ${key}`, 'x-db-name': t.name, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

async function newKey(options: { expiresAt?: string | null } = {}) {
  return t.run(() => createServiceAccountKey({ name: `remembered ${randomBytes(3).toString('hex')}`, groups: ['core.group_admin', 'core.group_user'], ...options }));
}

/** A new key, used once on every worker so each remembers it; returns it with its ids. */
async function warmKey(options: { expiresAt?: string | null } = {}) {
  const created = await newKey(options);
  for (const w of workers) {
    const res = await call(w, created.key, 'POST', '/api/query/Contact', { fields: ['name'], limit: 1 });
    expect(res.statusCode, res.body).toBe(200);
  }
  // Remembered: the next query is a single guarded statement.
  const counted = await t.countStatements(() => call(workers[0]!, created.key, 'POST', '/api/query/Contact', { fields: ['name'], limit: 1 }));
  expect(counted.count, counted.statements.join('\n')).toBe(1);
  expect(counted.statements[0]).toMatch(READ_GUARD);
  return created;
}

function contactsNamed(name: string): Promise<number> {
  return t.run(() => Contact.query({ name }).with_archived().count());
}

describe('remembered credentials', () => {
  it('a revoked key is refused by every worker on the very next request, reads and writes alike', async () => {
    const { key, apiKeyId } = await warmKey();
    await t.run(() => ApiKey.query({ id: apiKeyId }).update({ revoked_at: new Date().toISOString() }));
    // Worker 0: a write first (its guard runs inside the transaction, before the INSERT).
    const write = await call(workers[0]!, key, 'POST', '/api/create/Contact', { name: 'Written after revocation' });
    expect(write.statusCode).toBe(401);
    expect(write.json()).toEqual(INVALID);
    expect(await contactsNamed('Written after revocation')).toBe(0);
    // Worker 1: a read.
    const read = await call(workers[1]!, key, 'POST', '/api/query/Contact', { fields: ['name'] });
    expect(read.statusCode).toBe(401);
    expect(read.json()).toEqual(INVALID);
    // Forgotten: later requests take the full look-up and are refused too.
    for (const w of workers) expect((await call(w, key, 'POST', '/api/query/Contact', {})).statusCode).toBe(401);
    // The template key, remembered by the same workers, is unaffected.
    expect((await call(workers[0]!, t.apiKey, 'POST', '/api/query/Contact', {})).statusCode).toBe(200);
  });

  it('updates and deletes with a revoked remembered key change nothing', async () => {
    const target = await t.run(() => Contact.create({ name: 'Keep me' }));
    const task = await t.run(() => ProjectTask.create({ name: 'Stays open' }));
    for (const attempt of [
      (key: string) => call(workers[0]!, key, 'PUT', `/api/update/Contact/${target.id}`, { name: 'Defaced' }),
      (key: string) => call(workers[0]!, key, 'DELETE', `/api/delete/Contact/${target.id}`),
      (key: string) => call(workers[0]!, key, 'POST', `/api/execute/ProjectTask/action_close`, { ids: [task.id] }),
    ]) {
      const { key, apiKeyId } = await warmKey();
      await t.run(() => ApiKey.query({ id: apiKeyId }).update({ revoked_at: new Date().toISOString() }));
      const res = await attempt(key);
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json()).toEqual(INVALID);
    }
    const [stored] = await t.run(() => Contact.query({ id: target.id }).read(['name']));
    expect(stored?.name).toBe('Keep me');
    const [open] = await t.run(() => ProjectTask.query({ id: task.id }).read(['stage.is_closed']));
    expect((open?.stage as { is_closed: boolean } | null)?.is_closed ?? false).toBe(false);
  });

  it('a revoked remembered key gets a 401, not the answer the request would have had', async () => {
    // Each case against a freshly warmed then revoked key (a refusal makes the worker forget it).
    const requests: ((key: string) => ReturnType<typeof call>)[] = [
      // Would be a 404 before any statement runs.
      (key) => call(workers[1]!, key, 'POST', '/api/query/NoSuchModel', {}),
      // Would be a 400 from the filter parser, before any statement runs.
      (key) => call(workers[1]!, key, 'POST', '/api/query/Contact', { filter_str: 'Q(no_such_field=1)' }),
      // Runs no statement at all.
      (key) => call(workers[1]!, key, 'GET', '/api/get_registry/Contact'),
      // Reads nothing: an empty answer confirms nothing, so the check runs on its own.
      (key) => call(workers[1]!, key, 'POST', '/api/query/Contact', { filter_str: "Q(name='No such contact anywhere')" }),
      (key) => call(workers[1]!, key, 'POST', '/api/name_search/Contact', { term: 'No such contact anywhere' }),
      // Not a route at all.
      (key) => call(workers[1]!, key, 'GET', '/api/no/such/route'),
    ];
    for (const request of requests) {
      const { key, apiKeyId } = await warmKey();
      await t.run(() => ApiKey.query({ id: apiKeyId }).update({ revoked_at: new Date().toISOString() }));
      const res = await request(key);
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json()).toEqual(INVALID);
    }
  });

  it('a valid remembered key gets the ordinary answer for requests that fail or read nothing', async () => {
    const { key } = await warmKey();
    expect((await call(workers[0]!, key, 'POST', '/api/query/NoSuchModel', {})).statusCode).toBe(404);
    const bad = await call(workers[0]!, key, 'POST', '/api/query/Contact', { filter_str: 'Q(no_such_field=1)' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('QuerySyntaxError');
    expect((await call(workers[0]!, key, 'GET', '/api/get_registry/Contact')).statusCode).toBe(200);
    const empty = await call(workers[0]!, key, 'POST', '/api/query/Contact', { filter_str: "Q(name='No such contact anywhere')" });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual([]);
    // A statement that fails in PostgreSQL while the check is still pending: the check runs on its
    // own afterwards (the failed statement confirmed nothing), then the real error is answered.
    // (A unique violation: what PostgreSQL would refuse in a value, as NUL, the fields refuse first.)
    await t.run(() => ProjectTag.create({ name: 'Remembered duplicate' }));
    let failing: Awaited<ReturnType<typeof call>> | undefined;
    const counted = await t.countStatements(async () => {
      failing = await call(workers[0]!, key, 'POST', '/api/create/ProjectTag', { name: 'Remembered duplicate' });
    });
    const sent = counted.statements.filter((s) => s !== 'begin' && s !== 'rollback');
    expect(sent.map((s) => s.includes('ff_request_guard('))).toEqual([true, true]);
    expect(sent[1]).toMatch(/^SELECT ff_request_guard\(/);
    if (!failing) throw new Error('no response');
    expect(failing.statusCode, failing.body).toBe(400);
    expect(failing.json()).toEqual({ detail: expect.stringContaining("'name' must be unique"), error: 'ValidationError', field: 'name' });
    expect((await call(workers[0]!, key, 'GET', '/api/no/such/route')).statusCode).toBe(404);
  });

  it('an expiry moved into the past is refused on the next request', async () => {
    const { key, apiKeyId } = await warmKey({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    await t.run(() => ApiKey.query({ id: apiKeyId }).update({ expires_at: new Date(Date.now() - 1000).toISOString() }));
    const res = await call(workers[0]!, key, 'POST', '/api/query/Contact', {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INVALID);
  });

  it('a key expiring while remembered is refused once its time has passed', async () => {
    const { key } = await warmKey({ expiresAt: new Date(Date.now() + 1500).toISOString() });
    await new Promise((r) => setTimeout(r, 1600));
    const res = await call(workers[1]!, key, 'POST', '/api/query/Contact', {});
    expect(res.statusCode).toBe(401);
  });

  it('a deactivated account is refused on the next request, and served again once reactivated', async () => {
    const { key, serviceAccountId } = await warmKey();
    await t.run(() => ServiceAccount.query({ id: serviceAccountId }).update({ active: false }));
    for (const w of workers) {
      const res = await call(w, key, 'POST', '/api/create/Contact', { name: 'By a deactivated account' });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID);
    }
    expect(await contactsNamed('By a deactivated account')).toBe(0);
    await t.run(() => ServiceAccount.query(`Q(id=${serviceAccountId}) & Q(active=False)`).update({ active: true }));
    expect((await call(workers[0]!, key, 'POST', '/api/create/Contact', { name: 'After reactivation' })).statusCode).toBe(200);
  });

  it('an account whose user changed acts as the new user from the next request on', async () => {
    const { key, serviceAccountId } = await warmKey();
    const other = await t.run(() => User.create({ name: 'Replacement identity', is_service_account: true }));
    await t.run(() => ServiceAccount.query({ id: serviceAccountId }).update({ user: other.id }));
    const res = await call(workers[0]!, key, 'POST', '/api/create/Contact', { name: 'Written as the replacement' });
    expect(res.statusCode, res.body).toBe(200);
    const [written] = await t.run(() => Contact.query({ id: res.json().id }).read(['created_by']));
    expect((written?.created_by as { id: number } | null)?.id).toBe(other.id);
  });

  it('a remembered key is refused after a revocation written in plain SQL, outside the ORM', async () => {
    const { key, apiKeyId } = await warmKey();
    const db = await t.platform.database(t.name);
    await sql`UPDATE api_key SET revoked_at = now() WHERE id = ${apiKeyId}`.execute(db.executor);
    for (const w of workers) {
      const res = await call(w, key, 'POST', '/api/query/Contact', { fields: ['name'], limit: 1 });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID);
    }
  });

  it('a remembered session ended by a logout on another worker is refused on the next request', async () => {
    const uid = await t.run(async () => (await User.query({ email: 'admin@example.com' }).ids())[0]
      ?? (await User.query().order_by('id ASC').limit(1).ids())[0]!);
    const tokens = await t.run(() => openSession(uid, { dbName: t.name, secret: t.platform.secret, sessionHours: 1 }));
    for (const w of workers) {
      for (let i = 0; i < 2; i++) expect((await call(w, tokens.access_token, 'POST', '/api/query/Contact', { limit: 1 })).statusCode).toBe(200);
    }
    // Remembered on worker 0: one guarded statement.
    const counted = await t.countStatements(() => call(workers[0]!, tokens.access_token, 'POST', '/api/query/Contact', { limit: 1 }));
    expect(counted.count, counted.statements.join('\n')).toBe(1);
    expect(counted.statements[0]).toMatch(READ_GUARD);
    const out = await workers[1]!.inject({
      method: 'POST', url: '/auth/logout', headers: { authorization: `Bearer ${tokens.access_token}`, 'x-db-name': t.name, 'content-type': 'application/json' }, payload: '{}',
    });
    expect(out.statusCode, out.body).toBe(200);
    const res = await call(workers[0]!, tokens.access_token, 'POST', '/api/query/Contact', { limit: 1 });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(INVALID);
  });

  it('the guard reads one row: a change to another credential costs a remembered key one full look-up, and it is served', async () => {
    const { key } = await warmKey();
    const other = await newKey();
    const db = await t.platform.database(t.name);
    const version = async () => (await sql<{ v: number }>`SELECT credential_version AS v FROM ff_state`.execute(db.executor)).rows[0]!.v;
    const before = await version();
    await t.run(() => ApiKey.query({ id: other.apiKeyId }).update({ revoked_at: new Date().toISOString() }));
    expect(await version()).toBe(before + 1);
    const counted = await t.countStatements(async () => {
      const res = await call(workers[0]!, key, 'POST', '/api/query/Contact', { fields: ['name'], limit: 1 });
      expect(res.statusCode, res.body).toBe(200);
    });
    // The refused guarded SELECT, the full look-up (with the access profile), the SELECT again.
    expect(counted.statements[0]).toMatch(READ_GUARD);
    expect(counted.statements[1]).toMatch(/^WITH touched AS \(\s*UPDATE api_key/);
    expect(counted.statements.filter((s) => /^WITH touched AS/.test(s)), counted.statements.join('\n')).toHaveLength(1);
    expect(counted.statements.filter(carriesGuard)).toHaveLength(1);
    expect(counted.statements.at(-1)).toMatch(/FROM "contact"/);
    // Remembered again, at the new version.
    const next = await t.countStatements(() => call(workers[0]!, key, 'POST', '/api/query/Contact', { limit: 1 }));
    expect(next.count, next.statements.join('\n')).toBe(1);
  });

  it('a database that starts installing answers 503 to a remembered key, and serves it again afterwards', async () => {
    const { key } = await warmKey();
    const db = await t.platform.database(t.name);
    await setInstalling(db.executor, true);
    try {
      for (const w of workers) {
        const res = await call(w, key, 'POST', '/api/query/Contact', {});
        expect(res.statusCode).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.json().error).toBe('DatabaseBusy');
      }
    } finally {
      await setInstalling(db.executor, false);
    }
    expect((await call(workers[0]!, key, 'POST', '/api/query/Contact', {})).statusCode).toBe(200);
  });

  it('a registry version bumped by another worker is noticed: the request is resolved again and re-run', async () => {
    const { key } = await warmKey();
    await t.run(() => Contact.create({ name: 'Visible after the bump' }));
    const db = await t.platform.database(t.name);
    await bumpRegistryVersion(db.executor);
    let res: Awaited<ReturnType<typeof call>> | undefined;
    const counted = await t.countStatements(async () => {
      res = await call(workers[0]!, key, 'POST', '/api/query/Contact', { fields: ['name'], filter_str: "Q(name='Visible after the bump')" });
    });
    expect(res!.statusCode, res!.body).toBe(200);
    expect(res!.json()).toEqual([{ id: expect.any(Number), name: 'Visible after the bump', display_name: 'Visible after the bump' }]);
    // The refused guarded SELECT, the full look-up, the registry's module list, the SELECT again.
    expect(counted.statements[0]).toMatch(READ_GUARD);
    expect(counted.statements).toContainEqual(expect.stringMatching(/^WITH touched AS[\s\S]*FROM ff_state/));
    expect(carriesGuard(counted.statements.at(-1)!)).toBe(false);
    expect(counted.statements.at(-1)).toMatch(/FROM "contact"/);
    // Remembered again at the new version.
    const next = await t.countStatements(() => call(workers[0]!, key, 'POST', '/api/query/Contact', { limit: 1 }));
    expect(next.count, next.statements.join('\n')).toBe(1);
  });

  it('without the guard function (a database from before it existed) a write takes the full look-up, and every request after it', async () => {
    const { key } = await newKey();
    const db = await t.platform.database(t.name);
    const worker = await buildApp(t.platform, { dev: false });
    try {
      // Remembered first, then the function disappears behind the worker's back.
      expect((await call(worker, key, 'POST', '/api/query/Contact', {})).statusCode).toBe(200);
      await sql`DROP FUNCTION ff_request_guard(integer, integer, integer, timestamptz)`.execute(db.executor);
      // A read needs no function: the same comparison rides in its select list.
      const read = await t.countStatements(async () => {
        const res = await call(worker, key, 'POST', '/api/query/Contact', { limit: 1 });
        expect(res.statusCode, res.body).toBe(200);
      });
      expect(read.count, read.statements.join('\n')).toBe(1);
      expect(read.statements[0]).toMatch(READ_GUARD);
      // A write's guard is the function: missing, the request is resolved again in full and the
      // key is no longer remembered.
      const write = await t.countStatements(async () => {
        const res = await call(worker, key, 'POST', '/api/create/Contact', { name: 'Written without the guard function' });
        expect(res.statusCode, res.body).toBe(200);
      });
      expect(write.statements.some((s) => WRITE_GUARD.test(s))).toBe(true);
      expect(write.statements.some((s) => /^WITH touched AS/.test(s))).toBe(true);
      for (let i = 0; i < 2; i++) {
        const counted = await t.countStatements(async () => {
          const res = await call(worker, key, 'POST', '/api/query/Contact', { limit: 1 });
          expect(res.statusCode, res.body).toBe(200);
        });
        expect(counted.statements.some(carriesGuard)).toBe(false);
        expect(counted.statements.filter((s) => /^WITH touched AS[\s\S]*FROM ff_state/.test(s))).toHaveLength(1);
      }
    } finally {
      await worker.close();
      await installRequestGuard(db.executor); // for the other tests of this file
    }
  });
});
