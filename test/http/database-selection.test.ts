/**
 * Database selection (ARCHITECTURE §2, §9): the X-DB-NAME header (malformed → 400, unknown →
 * 404 DatabaseNotFound), the host's first label, per-database registries (a model of a module not
 * installed there is a 404), per-database keys, and the install flag that lives in the database
 * (503 + Retry-After: 5 from every worker, including an independent Platform).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { setInstalling } from '../../src/db/platform-state.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let full: TestDatabase;
let core: TestDatabase;
let prodApp: FastifyInstance;

beforeAll(async () => {
  [full, core] = await Promise.all([testDatabase('full'), testDatabase('core')]);
  prodApp = await buildApp(full.platform, { dev: false });
});
afterAll(async () => {
  await prodApp?.close();
  await full?.close();
  await core?.close();
});

function inject(app: FastifyInstance, method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown) {
  return app.inject({
    method, url,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

const RULE = 'a database name must be 1-63 characters of lowercase letters, digits and "_", starting with a letter';

describe('X-DB-NAME', () => {
  it('a malformed name is a 400', async () => {
    const cases: [string, string][] = [
      ['../x', `Invalid database name "../x": ${RULE}`],
      ['A"B', `Invalid database name "A\\"B": ${RULE}`],
      ['main; DROP DATABASE x', `Invalid database name "main; DROP DATABASE x": ${RULE}`],
      ['postgres', 'Invalid database name "postgres": the name is reserved (postgres, template0, template1 and names starting with "pg_")'],
    ];
    for (const [name, detail] of cases) {
      const res = await inject(prodApp, 'POST', '/api/query/Contact', { authorization: `Bearer ${full.apiKey}`, 'x-db-name': name }, {});
      expect(res.statusCode, name).toBe(400);
      expect(res.json()).toEqual({ detail, error: 'BadRequest' });
    }
  });

  it('an unknown database is a 404 DatabaseNotFound', async () => {
    const res = await inject(prodApp, 'POST', '/api/query/Contact', { authorization: `Bearer ${full.apiKey}`, 'x-db-name': 'fft_no_such_database' }, {});
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'Database "fft_no_such_database" does not exist', error: 'DatabaseNotFound' });
  });

  it('a model whose module is not installed in the selected database is a 404, in the same process', async () => {
    // One app serves both databases; each has its own registry.
    const inCore = await inject(full.app, 'POST', '/api/query/ProjectTask', { authorization: `Bearer ${core.apiKey}`, 'x-db-name': core.name }, {});
    expect(inCore.statusCode).toBe(404);
    expect(inCore.json()).toMatchObject({ detail: "Model 'ProjectTask' does not exist", error: 'NotFound' });
    const inFull = await inject(full.app, 'POST', '/api/query/ProjectTask', { authorization: `Bearer ${full.apiKey}`, 'x-db-name': full.name }, {});
    expect(inFull.statusCode, inFull.body).toBe(200);
    expect(inFull.json()).toEqual([]);
    // The same holds on the core database's own app, for every model route.
    for (const [method, url] of [['POST', '/api/query/ProjectTask'], ['POST', '/api/fetch/ProjectTask/1'], ['POST', '/api/create/Contact'], ['GET', '/api/get_registry/ProjectStage']] as const) {
      const res = await core.api(method, url, method === 'POST' ? {} : undefined);
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error).toBe('NotFound');
    }
    expect((await core.api('POST', '/api/query/Company', {})).statusCode).toBe(200);
  });

  it('a key is valid only in the database it was created in', async () => {
    const res = await inject(full.app, 'POST', '/api/query/Company', { authorization: `Bearer ${full.apiKey}`, 'x-db-name': core.name }, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ detail: 'Invalid, revoked or expired credential', error: 'AuthenticationError' });
  });

  it('without the header, the host names the database; with several databases and no hint it is a 400', async () => {
    const byHost = await inject(full.app, 'POST', '/api/query/Contact', { authorization: `Bearer ${full.apiKey}`, host: `${full.name}.example.com` }, {});
    expect(byHost.statusCode, byHost.body).toBe(200);
    const noHint = await inject(prodApp, 'POST', '/api/query/Contact', { authorization: `Bearer ${full.apiKey}`, host: 'nothing.example.com' }, {});
    expect(noHint.statusCode).toBe(400);
    expect(noHint.json()).toEqual({ detail: 'Several databases exist: choose one with the X-DB-NAME header', error: 'BadRequest' });
  });

  it('never takes the database from the body', async () => {
    const res = await inject(full.app, 'POST', '/api/query/ProjectTask', { authorization: `Bearer ${full.apiKey}`, 'x-db-name': full.name }, { x_db_name: core.name, db: core.name, database: core.name });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('database busy (install flag in the database)', () => {
  it('answers 503 with Retry-After: 5 on every /api request, on this app and on an independent Platform', async () => {
    const otherEngine = new PostgresEngine({ url: TEST_DATABASE_URL });
    const otherPlatform = new Platform(otherEngine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
    const otherApp = await buildApp(otherPlatform, { dev: false });
    const headers = { authorization: `Bearer ${full.apiKey}`, 'x-db-name': full.name };
    try {
      // Both apps serve the database before the flag is set (and the other one caches its registry).
      expect((await inject(otherApp, 'POST', '/api/query/Contact', headers, {})).statusCode).toBe(200);
      const contactsBefore = await full.run(() => Contact.query().count());

      const db = await full.platform.database(full.name);
      await setInstalling(db.executor, true);
      try {
        const requests: [FastifyInstance, 'GET' | 'POST', string, unknown][] = [
          [prodApp, 'POST', '/api/query/Contact', {}],
          [prodApp, 'POST', '/api/create/Contact', { name: 'During install' }],
          [prodApp, 'GET', '/api/get_registry/Contact', undefined],
          [prodApp, 'POST', '/api/name_search/Contact', { term: 'x' }],
          [otherApp, 'POST', '/api/query/Contact', {}],
          [otherApp, 'POST', '/api/create/Contact', { name: 'During install (other worker)' }],
          [otherApp, 'POST', '/api/fetch/Contact/1', {}],
        ];
        for (const [app, method, url, body] of requests) {
          const res = await inject(app, method, url, headers, body);
          expect(res.statusCode, `${app === otherApp ? 'other' : 'this'} ${url}`).toBe(503);
          expect(res.headers['retry-after']).toBe('5');
          expect(res.json()).toEqual({ detail: `Database '${full.name}' is installing or upgrading modules; retry shortly`, error: 'DatabaseBusy' });
        }
        // The harness's dev app too.
        const dev = await full.api('POST', '/api/query/Contact', {});
        expect(dev.statusCode).toBe(503);
        expect(dev.headers['retry-after']).toBe('5');
      } finally {
        await setInstalling(db.executor, false);
      }
      expect(await full.run(() => Contact.query().count())).toBe(contactsBefore);
      // Cleared flag: both answer again at once.
      expect((await inject(prodApp, 'POST', '/api/query/Contact', headers, {})).statusCode).toBe(200);
      expect((await inject(otherApp, 'POST', '/api/query/Contact', headers, {})).statusCode).toBe(200);
    } finally {
      await otherApp.close();
      await otherPlatform.close();
    }
  });

  it('does not affect another database', async () => {
    const db = await full.platform.database(full.name);
    await setInstalling(db.executor, true);
    try {
      expect((await core.api('POST', '/api/query/Company', {})).statusCode).toBe(200);
    } finally {
      await setInstalling(db.executor, false);
    }
  });
});
