/**
 * Database constraints on embedded PGlite (PostgreSQL 18): the suite the server runs in
 * `test/orm/constraints.test.ts`. PostgreSQL 18 reports a RESTRICT key as SQLSTATE 23001, which
 * once answered 500 here. Then what the README promises of unknown and dropped databases, on this
 * engine too. PGlite's initdb takes seconds, so the file creates ONE database (dropped last).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { createEngine } from '../../src/db/create-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { createDatabase, dropDatabase } from '../../src/platform/database-lifecycle.js';
import { readPlatformState } from '../../src/db/platform-state.js';
import { Platform } from '../../src/platform/platform.js';
import { integritySuite, type IntegrityHarness } from '../support/integrity-suite.js';
import { FIXTURE_MODULES } from '../support/orm.js';

const DATABASE = 'main';
let dataDir: string;
let platform: Platform;
let app: FastifyInstance;
let harness: IntegrityHarness;
let key: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-pglite-constraints-'));
  const engine = createEngine({ dataDir });
  expect(engine.kind).toBe('pglite');
  platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR, FIXTURE_MODULES]));
  await createDatabase(platform, DATABASE, { modules: ['orm_fields', 'orm_relations'], adminPassword: 'constraints-admin-password' });
  ({ key } = await platform.run(DATABASE, {}, () => createServiceAccountKey({ name: 'constraints', groups: ['core.group_admin', 'core.group_user'] })));
  app = await buildApp(platform, { dev: true });
  harness = {
    run: (fn) => platform.run(DATABASE, {}, fn),
    async failure(fn) {
      try {
        await platform.run(DATABASE, {}, fn);
      } catch (err) {
        return err as Error;
      }
      throw new Error('expected the unit of work to fail');
    },
    api: (method, url, body) => app.inject({
      method, url,
      headers: { authorization: `Bearer ${key}`, 'x-db-name': DATABASE, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    }),
  };
}, 180_000);
afterAll(async () => {
  await app?.close();
  await platform?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

integritySuite(() => harness);

describe('unknown and dropped databases', () => {
  /** A request of each route family for database `name`. */
  function everyRoute(name: string) {
    const headers = { 'x-db-name': name, 'content-type': 'application/json' };
    const withKey = { ...headers, authorization: `Bearer ${key}` };
    return Promise.all([
      app.inject({ method: 'POST', url: '/api/query/User', headers: withKey, payload: '{}' }),
      app.inject({ method: 'GET', url: '/altcha/challenge', headers: { 'x-db-name': name } }),
      app.inject({ method: 'POST', url: '/auth/authenticate', headers, payload: '{"email": "a@b.c", "password": "x"}' }),
      app.inject({ method: 'GET', url: `/filestore/view/1?db=${name}&expires=1&sig=x` }),
    ]);
  }

  it('an unknown database is 404 DatabaseNotFound on every route', async () => {
    for (const res of await everyRoute('nosuch')) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ detail: 'Database "nosuch" does not exist', error: 'DatabaseNotFound' });
    }
  });

  it('a dropped database is gone at once: 404 on every route, its registry forgotten', async () => {
    const { registryVersion } = await readPlatformState((await platform.database(DATABASE)).executor);
    expect(platform.loadedRegistry(DATABASE, registryVersion)).not.toBeNull();
    await dropDatabase(platform, DATABASE);
    for (const res of await everyRoute(DATABASE)) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ detail: `Database "${DATABASE}" does not exist`, error: 'DatabaseNotFound' });
    }
    expect(platform.loadedRegistry(DATABASE, registryVersion)).toBeNull();
  });
});
