/**
 * A statement timeout caps what one request's SQL may cost (`FF_STATEMENT_TIMEOUT`, here 0.5 s)
 * and a lock timeout how long it may wait behind someone else's lock (`FF_LOCK_TIMEOUT`, here
 * 0.3 s): the request answers 503 with a message naming the setting, nothing it wrote is kept, and
 * the worker keeps serving everyone else meanwhile and afterwards — never a hung worker.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { SLOW_PROBE, writeSlowProbe } from '../support/slow-probe.js';

const STATEMENT_TIMEOUT_MS = 500;
const LOCK_TIMEOUT_MS = 300;
/** Few connections, so a worker that leaked the timed-out ones would soon have none left. */
const POOL_MAX = 2;

const NAME = `fft_timeout_${randomBytes(4).toString('hex')}`;
const template = inject('templates').core;

let probeRoot: string;
let platform: Platform;
let app: FastifyInstance;

beforeAll(async () => {
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-timeout-probe-'));
  await writeSlowProbe(probeRoot);
  const catalog = await ModuleCatalog.scan([BUILTIN_MODULES_DIR, probeRoot]);
  // The probe is installed without timeouts (as an operator's upgrade would be); requests get them.
  const installer = new Platform(new PostgresEngine({ url: TEST_DATABASE_URL }), catalog);
  await installer.engine.clone(template.database, NAME);
  await installer.install(NAME, { init: [SLOW_PROBE] });
  await installer.close();
  const engine = new PostgresEngine({
    url: TEST_DATABASE_URL, poolMax: POOL_MAX, statementTimeoutMs: STATEMENT_TIMEOUT_MS, lockTimeoutMs: LOCK_TIMEOUT_MS,
  });
  platform = new Platform(engine, catalog);
  app = await buildApp(platform);
});
afterAll(async () => {
  await app?.close();
  await platform?.engine.drop(NAME).catch(() => {});
  await platform?.close();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

function api(method: 'GET' | 'POST', url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return app.inject({
    method, url,
    headers: { authorization: `Bearer ${template.apiKey}`, 'x-db-name': NAME, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

function execute(method: string, inputs: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return api('POST', `/api/execute/SlowProbe/${method}`, { request_body: { inputs } });
}

async function timed(request: Promise<LightMyRequestResponse>): Promise<{ res: LightMyRequestResponse; ms: number }> {
  const start = performance.now();
  const res = await request;
  return { res, ms: performance.now() - start };
}

function expectStatementTimeout(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(503);
  expect(res.json().error).toBe('StatementTimeout');
  expect(res.json().detail).toContain('FF_STATEMENT_TIMEOUT');
  expect(res.headers['retry-after']).toBeUndefined(); // the same request would take as long again
}

describe('statement timeout', () => {
  it('the request pools carry both timeouts', async () => {
    const db = await platform.database(NAME);
    const { rows } = await sql<{ statement: string; lock: string }>`
      SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock`.execute(db.executor);
    expect(rows[0]).toEqual({ statement: '500ms', lock: '300ms' });
  });

  it('a statement running longer answers 503 StatementTimeout naming FF_STATEMENT_TIMEOUT, after about the timeout', async () => {
    const { res, ms } = await timed(execute('sleep', { seconds: 10 }));
    expectStatementTimeout(res);
    expect(ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(5_000);
    const quick = await execute('sleep', { seconds: 0.05 });
    expect(quick.statusCode, quick.body).toBe(200);
    expect(quick.json().result).toBe('awake');
  });

  it('what the request wrote before is not kept', async () => {
    const name = `timed out ${randomBytes(3).toString('hex')}`;
    expectStatementTimeout(await execute('note_then_sleep', { name, seconds: 10 }));
    const written = await api('POST', '/api/query/SlowProbe', { fields: ['name'], filter_str: `Q(name__startswith='${name}')` });
    expect(written.statusCode, written.body).toBe(200);
    expect(written.json()).toEqual([]);
  });

  it('the worker serves other requests while one runs into the timeout, and after many of them', async () => {
    const slow = timed(execute('sleep', { seconds: 10 }));
    const others = await Promise.all(Array.from({ length: 5 }, () => timed(api('POST', '/api/query/User', { fields: ['name'] }))));
    for (const { res } of others) expect(res.statusCode, res.body).toBe(200);
    const health = await app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    const { res, ms } = await slow;
    expectStatementTimeout(res);
    // The quick requests did not wait for the slow one.
    expect(Math.max(...others.map((o) => o.ms))).toBeLessThan(ms);

    // More timed-out requests than the pool has connections: none of them keeps one.
    const many = await Promise.all(Array.from({ length: POOL_MAX * 3 }, () => execute('sleep', { seconds: 10 })));
    for (const r of many) expectStatementTimeout(r);
    const after = await api('POST', '/api/query/User', { fields: ['name'] });
    expect(after.statusCode, after.body).toBe(200);
  });
});

describe('lock timeout', () => {
  it('a request waiting behind a lock held elsewhere answers 503 DatabaseBusy with Retry-After: 5, naming FF_LOCK_TIMEOUT', async () => {
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/${NAME}`;
    const holder = new pg.Client({ connectionString: url.href });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE slow_probe IN ACCESS EXCLUSIVE MODE');
      const { res, ms } = await timed(api('POST', '/api/create/SlowProbe', { name: 'behind a lock' }));
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ error: 'DatabaseBusy' });
      expect(res.json().detail).toContain('FF_LOCK_TIMEOUT');
      expect(res.headers['retry-after']).toBe('5');
      expect(ms).toBeLessThan(STATEMENT_TIMEOUT_MS * 4);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const free = await api('POST', '/api/create/SlowProbe', { name: 'no lock any more' });
    expect(free.statusCode, free.body).toBe(200);
  });
});
