/**
 * A database dropped by another process (`fieldforge db drop NAME`, run for real) while two
 * independent workers (each its own Platform, engine, pools and app, as two `serve` processes
 * would have) serve it under traffic: from the drop on, every route of both workers (`/api`, `/auth`, `/altcha`, `/filestore`) answers 404
 * `DatabaseNotFound` at once — never a 500, never a stall — because each worker's own pool finds
 * the database gone when it next connects (SQLSTATE 3D000), closes itself and the platform forgets
 * the database. A database created again under the same name is then served afresh.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readPlatformState } from '../../src/db/platform-state.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { runCli } from '../support/cli.js';
import { TEST_DATABASE_URL } from '../support/services.js';

const NAME = `fft_dropped_${randomBytes(4).toString('hex')}`;
const template = inject('templates').core;

interface Worker {
  engine: PostgresEngine;
  platform: Platform;
  app: FastifyInstance;
}

let workers: Worker[] = [];
let dataDir: string;

async function startWorker(): Promise<Worker> {
  const engine = new PostgresEngine({ url: TEST_DATABASE_URL });
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  return { engine, platform, app: await buildApp(platform) };
}

/** One request of every kind a client may send for the database, by route family. */
const ROUTES: Record<string, { method: 'GET' | 'POST'; url: string; body?: unknown; key?: boolean }> = {
  'POST /api/query': { method: 'POST', url: '/api/query/User', body: { fields: ['name'] }, key: true },
  'POST /api/fetch': { method: 'POST', url: '/api/fetch/User/1', body: { fields: ['name'] }, key: true },
  'GET /api/get_registry': { method: 'GET', url: '/api/get_registry/User', key: true },
  'GET /api/files/:id/url': { method: 'GET', url: '/api/files/1/url', key: true },
  'GET /altcha/challenge': { method: 'GET', url: '/altcha/challenge' },
  'POST /auth/authenticate': { method: 'POST', url: '/auth/authenticate', body: { email: 'a@b.c', password: 'x' } },
  'POST /auth/refresh': { method: 'POST', url: '/auth/refresh', body: { refresh_token: 'ffr_x' } },
  'POST /auth/logout': { method: 'POST', url: '/auth/logout', body: {}, key: true },
  'GET /filestore (credential)': { method: 'GET', url: '/filestore/view/1', key: true },
  'GET /filestore (signed link)': { method: 'GET', url: `/filestore/view/1?db=${NAME}&expires=1&sig=x` },
};

function request(worker: Worker, route: keyof typeof ROUTES): Promise<LightMyRequestResponse> {
  const { method, url, body, key } = ROUTES[route]!;
  return worker.app.inject({
    method, url,
    headers: {
      'x-db-name': NAME,
      ...(key ? { authorization: `Bearer ${template.apiKey}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

async function timed(worker: Worker, route: keyof typeof ROUTES): Promise<{ res: LightMyRequestResponse; ms: number }> {
  const start = performance.now();
  const res = await request(worker, route);
  return { res, ms: performance.now() - start };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-dropped-'));
  workers = [await startWorker(), await startWorker()];
  await workers[0]!.engine.clone(template.database, NAME);
});
afterAll(async () => {
  for (const { app, platform } of workers) {
    await app.close();
    await platform.close();
  }
  const cleanup = new PostgresEngine({ url: TEST_DATABASE_URL });
  if (await cleanup.exists(NAME)) await cleanup.drop(NAME);
  await cleanup.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a database dropped while two workers serve it', () => {
  let registryVersion: number;

  it('is served by both workers before the drop (pools open, registry built, credential remembered)', async () => {
    for (const worker of workers) {
      for (let i = 0; i < 2; i++) {
        const { res } = await timed(worker, 'POST /api/query');
        expect(res.statusCode, res.body).toBe(200);
      }
      expect((await timed(worker, 'GET /api/get_registry')).res.statusCode).toBe(200);
      expect(worker.engine.openDatabases).toContain(NAME);
    }
    registryVersion = (await readPlatformState((await workers[0]!.platform.database(NAME)).executor)).registryVersion;
    for (const { platform } of workers) expect(platform.loadedRegistry(NAME, registryVersion)).not.toBeNull();
  });

  it('answers 404 DatabaseNotFound on every route of every worker as soon as `fieldforge db drop` returns — no 500 meanwhile', async () => {
    // Traffic on both workers while the command line drops the database.
    let dropping = true;
    const during: number[] = [];
    const traffic = workers.map(async (worker) => {
      while (dropping) {
        const [query, fetch] = await Promise.all([request(worker, 'POST /api/query'), request(worker, 'POST /api/fetch')]);
        during.push(query.statusCode, fetch.statusCode);
        for (const res of [query, fetch]) {
          // 503: a statement cut by DROP … WITH (FORCE) (DatabaseUnavailable, retried by the client).
          expect([200, 404, 503], res.body).toContain(res.statusCode);
        }
      }
    });
    const dropped = await runCli(['db', 'drop', NAME], { FF_DATA_DIR: dataDir });
    dropping = false;
    await Promise.all(traffic);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(during.length).toBeGreaterThan(0);

    for (const [index, worker] of workers.entries()) {
      for (const route of Object.keys(ROUTES)) {
        const { res, ms } = await timed(worker, route);
        expect(res.statusCode, `worker ${index} ${route}: ${res.body}`).toBe(404);
        expect(res.json(), `worker ${index} ${route}`).toEqual({ detail: `Database "${NAME}" does not exist`, error: 'DatabaseNotFound' });
        expect(ms, `worker ${index} ${route}`).toBeLessThan(1000);
      }
    }
  });

  it('closed each worker\'s pool and forgot its registry', async () => {
    for (const { engine, platform } of workers) {
      expect(engine.openDatabases).not.toContain(NAME);
      expect(await engine.poolSize(NAME)).toBeUndefined();
      expect(platform.loadedRegistry(NAME, registryVersion)).toBeNull();
    }
  });

  it('keeps answering 404 quickly for as long as the workers run', async () => {
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const { res, ms } = await timed(workers[i % 2]!, 'POST /api/query');
      expect(res.statusCode).toBe(404);
      latencies.push(ms);
    }
    expect(Math.max(...latencies)).toBeLessThan(500);
  });

  it('serves a new database of the same name afresh', async () => {
    await workers[1]!.engine.clone(template.database, NAME);
    for (const worker of workers) {
      const { res } = await timed(worker, 'POST /api/query');
      expect(res.statusCode, res.body).toBe(200);
    }
  });
});
