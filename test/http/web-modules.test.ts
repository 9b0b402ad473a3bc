/**
 * A module's own web assets at the HTTP level (src/http/routes/web-modules.ts): the files of its
 * `web/` folder under `/web/modules/<identifier>/`, served as the client's own are (types, ETag,
 * no-cache, nothing outside the folder), and `GET /api/web-modules`, the entries of the modules
 * installed in the caller's database (none in a database without such a module; signed-in callers only).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let full: TestDatabase;
let core: TestDatabase;

beforeAll(async () => {
  [full, core] = await Promise.all([testDatabase('full'), testDatabase('core')]);
});
afterAll(async () => {
  await full?.close();
  await core?.close();
});

describe('GET /api/web-modules', () => {
  it('lists the web entry of each installed module that has one (nothing in a database without one), and the installed modules', async () => {
    const res = await full.api('GET', '/api/web-modules');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ entries: ['/web/modules/project/index.js'], modules: expect.arrayContaining(['core', 'contacts', 'messaging', 'project']) });
    expect(res.json().modules.indexOf('core')).toBe(0); // dependency order
    expect(res.headers['cache-control']).toBe('no-store');
    const none = await core.api('GET', '/api/web-modules');
    expect(none.json()).toEqual({ entries: [], modules: ['core'] });
  });

  it('answers 401 without a credential', async () => {
    const res = await full.app.inject({ method: 'GET', url: '/api/web-modules', headers: { 'x-db-name': full.name } });
    expect(res.statusCode).toBe(401);
  });
});

describe('GET /web/modules/<identifier>/<path>', () => {
  it('serves the module’s web files as written, revalidated by ETag, with no session', async () => {
    const res = await full.app.inject({ method: 'GET', url: '/web/modules/project/index.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.body).toBe(readFileSync(new URL('../../modules/project/web/index.js', import.meta.url), 'utf8'));
    const again = await full.app.inject({ method: 'GET', url: '/web/modules/project/index.js', headers: { 'if-none-match': res.headers.etag as string } });
    expect(again.statusCode).toBe(304);
    const css = await full.app.inject({ method: 'GET', url: '/web/modules/project/progress-field.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('serves nothing outside a module’s web folder, nor for a module the server does not have', async () => {
    for (const url of [
      '/web/modules/project/../manifest.yaml',
      '/web/modules/project/%2e%2e/manifest.yaml',
      '/web/modules/project/%2e%2e/models/index.ts',
      '/web/modules/project/missing.js',
      '/web/modules/project/',
      '/web/modules/nosuch/index.js',
      '/web/modules/contacts/index.js',
    ]) {
      expect((await full.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });
});
