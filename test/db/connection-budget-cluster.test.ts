/**
 * The connection budget on a cluster with fewer connections than databases (issue 25, item 1):
 * `fieldforge serve --workers 2` with `FF_PG_MAX_CONNECTIONS=5` in front of a PostgreSQL of
 * `max_connections` 16 holding 24 FieldForge databases, 40 clients spread over them. The workers
 * never hold more than 2 × 5 connections and every request is answered 200 — where one pool per
 * database (10 each) took every slot and answered 503. And when the cluster itself has no slot left
 * (someone else took them all), a request answers 503 `DatabaseBusy` saying so, not "unavailable".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { createDatabase } from '../../src/platform/database-lifecycle.js';
import { Platform } from '../../src/platform/platform.js';
import { waitForChild } from '../support/child-output.js';
import { freePort, TestRedis } from '../support/redis-server.js';
import { ScratchCluster } from '../support/scratch-cluster.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAX_CONNECTIONS = 16;
const BUDGET = 5;
const DATABASES = 24;
const CLIENTS = 40;
const LOAD_MS = 6_000;

let cluster: ScratchCluster;
let redis: TestRedis;
let dataDir: string;
let apiKey: string;
const names = Array.from({ length: DATABASES }, (_, i) => `budget_${String(i).padStart(2, '0')}`);

beforeAll(async () => {
  cluster = await ScratchCluster.start({ max_connections: MAX_CONNECTIONS });
  const engine = new PostgresEngine({ url: cluster.url, maxConnections: 4 });
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  const template = 'budget_template';
  await createDatabase(platform, template, { modules: ['core'], adminPassword: 'budget-admin-password' });
  ({ key: apiKey } = await platform.run(template, {}, () => createServiceAccountKey({ name: 'budget', groups: ['core.group_admin', 'core.group_user'] })));
  await engine.closeDatabase(template);
  for (const name of names) await engine.clone(template, name); // the key comes along
  await platform.close();
  redis = await TestRedis.start();
  dataDir = await mkdtemp(join(tmpdir(), 'ff-budget-'));
}, 180_000);

afterAll(async () => {
  await redis?.stop();
  await cluster?.destroy();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Our backends on the cluster now (every worker's, every database's). */
async function ourBackends(sampler: pg.Client): Promise<number> {
  const { rows } = await sampler.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'fieldforge'`);
  return rows[0]!.n;
}

describe('a worker budget shared by every database', () => {
  it('serve --workers 2: 40 clients over 24 databases, never above 2 × FF_PG_MAX_CONNECTIONS, every request 200', async () => {
    const port = await freePort();
    const { FF_DEV: _dev, FF_ADDONS_PATH: _addons, ...inherited } = process.env;
    let output = '';
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--workers', '2', '--port', String(port), '--host', '127.0.0.1'], {
      cwd: ROOT,
      detached: true,
      env: {
        ...inherited, DATABASE_URL: cluster.url, REDIS_URL: redis.url, FF_REDIS_PREFIX: `ffbudget${randomBytes(3).toString('hex')}:`,
        FF_DATA_DIR: dataDir, FF_SECRET: randomBytes(32).toString('base64url'), FF_LOG_LEVEL: 'warn', FF_PG_MAX_CONNECTIONS: String(BUDGET),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const sampler = new pg.Client({ connectionString: cluster.url });
    try {
      await waitForChild(() => child, () => output, () => (output.match(/serving on http:\/\//g) ?? []).length >= 2, 'two "serving" lines');
      await sampler.connect();
      let most = 0;
      let sampling = true;
      const sampling_ = (async () => {
        while (sampling) {
          most = Math.max(most, await ourBackends(sampler));
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      })();
      const statuses = new Map<number, number>();
      const failures: string[] = [];
      /** 40 clients, each request to the next database of a spread-out order, for `ms` or `requests`. */
      const load = (ms: number, requests = Infinity) => {
        const until = Date.now() + ms;
        let sent = 0;
        return Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
          for (let i = client; Date.now() < until && sent++ < requests; i += CLIENTS) {
            const res = await fetch(`http://127.0.0.1:${port}/api/query/Currency`, {
              method: 'POST',
              headers: { authorization: `Bearer ${apiKey}`, 'x-db-name': names[(i * 7) % DATABASES]!, 'content-type': 'application/json' },
              body: JSON.stringify({ fields: ['name'], filter_str: 'Q(name="EUR")', limit: 1 }),
            });
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            const body = await res.text();
            if (res.status !== 200 && failures.length < 3) failures.push(`${res.status} ${body}`);
          }
        }));
      };
      // Every database's first requests on a worker build its registry (CPU, not connections):
      // answered and counted too, but the throughput figure is taken after them.
      await load(60_000, 4 * DATABASES);
      const warm = statuses.get(200) ?? 0;
      await load(LOAD_MS);
      console.log(`[budget] ${(statuses.get(200) ?? 0) - warm} requests in ${LOAD_MS} ms after ${warm} warming; most backends ${most}`);
      sampling = false;
      await sampling_;
      const answered = [...statuses.values()].reduce((a, b) => a + b, 0);
      expect(failures).toEqual([]);
      expect(Object.fromEntries(statuses)).toEqual({ 200: answered });
      expect(answered - warm).toBeGreaterThan(CLIENTS * 5);
      expect(most).toBeGreaterThan(BUDGET); // both workers served
      expect(most).toBeLessThanOrEqual(2 * BUDGET);
      expect(output).not.toMatch(/too many clients|53300/);
    } finally {
      await sampler.end().catch(() => {});
      if (child.pid && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(-child.pid, 'SIGKILL');
        await exited;
      }
    }
  }, 120_000);

  it('a cluster with no slot left answers 503 DatabaseBusy naming PostgreSQL\'s refusal, then serves again', async () => {
    const engine = new PostgresEngine({ url: cluster.url, maxConnections: BUDGET });
    const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
    const app = await buildApp(platform, {});
    const others: pg.Client[] = [];
    try {
      // Someone else takes every slot of the cluster (the superuser's reserved ones included).
      for (;;) {
        const other = new pg.Client({ connectionString: cluster.url });
        const taken = await other.connect().then(() => true, () => false);
        if (!taken) break;
        others.push(other);
      }
      expect(others.length).toBeGreaterThan(0);
      const ask = () => app.inject({
        method: 'POST', url: '/api/query/Currency',
        headers: { authorization: `Bearer ${apiKey}`, 'x-db-name': names[0]!, 'content-type': 'application/json' },
        payload: JSON.stringify({ fields: ['name'], limit: 1 }),
      });
      const refused = await ask();
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBe('5');
      const body = refused.json();
      expect(body.error).toBe('DatabaseBusy');
      expect(body.detail).toMatch(/connection slots are taken \(PostgreSQL 53300/);
      expect(body.detail).not.toMatch(/unavailable/);
      await others.pop()!.end();
      await others.pop()!.end();
      const served = await ask();
      expect(served.statusCode, served.body).toBe(200);
    } finally {
      for (const other of others) await other.end().catch(() => {});
      await app.close();
      await platform.close();
    }
  }, 60_000);
});
