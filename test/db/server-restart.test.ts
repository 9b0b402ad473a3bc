/**
 * Losing the database server is a 503, not a 500, and FieldForge recovers by itself. The test runs
 * its own PostgreSQL cluster (`ScratchCluster`) and restarts or stops it under concurrent traffic
 * of reads and writes: while the server is away every answer is 200 or 503 `DatabaseUnavailable`
 * with `Retry-After` (on every route), never a 500 and never a crashed process; once it is back,
 * every request succeeds again within 5 s without restarting FieldForge; a request cut in the
 * middle of its transaction leaves nothing written.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { createDatabase } from '../../src/platform/database-lifecycle.js';
import { Platform } from '../../src/platform/platform.js';
import { ScratchCluster } from '../support/scratch-cluster.js';
import { SLOW_PROBE, writeSlowProbe } from '../support/slow-probe.js';

const NAME = 'main';
/** Requests in flight at any time. */
const CONCURRENCY = 12;
/** After the server is back, every request must succeed within this. */
const RECOVERY_MS = 5_000;

let cluster: ScratchCluster;
let probeRoot: string;
let platform: Platform;
let app: FastifyInstance;
let key: string;

beforeAll(async () => {
  cluster = await ScratchCluster.start();
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-restart-probe-'));
  await writeSlowProbe(probeRoot);
  platform = new Platform(new PostgresEngine({ url: cluster.url }), await ModuleCatalog.scan([BUILTIN_MODULES_DIR, probeRoot]));
  await createDatabase(platform, NAME, { modules: [SLOW_PROBE], adminPassword: 'restart-admin-password' });
  ({ key } = await platform.run(NAME, {}, () => createServiceAccountKey({ name: 'restart', groups: ['core.group_admin', 'core.group_user'] })));
  app = await buildApp(platform);
}, 180_000);
afterEach(async () => {
  await cluster.ensureRunning(); // a failed test must not leave the next one without a server
});
afterAll(async () => {
  await app?.close();
  await platform?.close();
  await cluster?.destroy();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

function api(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method, url,
    headers: {
      authorization: `Bearer ${key}`, 'x-db-name': NAME,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers,
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

interface Answer {
  /** When the request was sent, ms since the traffic started. */
  sentAt: number;
  res: LightMyRequestResponse;
}

/**
 * Runs `scenario` while `CONCURRENCY` clients send reads and writes, each its next request as soon
 * as the last one answered; returns every answer. The traffic stops whatever the scenario does.
 */
async function underTraffic(scenario: (elapsed: () => number) => Promise<void>): Promise<Answer[]> {
  const start = performance.now();
  const elapsed = () => performance.now() - start;
  const answers: Answer[] = [];
  let running = true;
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      const sentAt = elapsed();
      const kind = (n + i) % 3;
      const res = kind === 0
        ? await api('POST', '/api/query/User', { fields: ['name', 'company.name'], limit: 5 })
        : kind === 1
          ? await api('POST', '/api/create/SlowProbe', { name: `traffic ${n}.${i}` })
          : await api('POST', '/api/query/SlowProbe', { fields: ['name'], counter: true, limit: 3 });
      answers.push({ sentAt, res });
    }
  };
  const clients = Array.from({ length: CONCURRENCY }, (_, n) => client(n));
  try {
    await scenario(elapsed);
  } finally {
    running = false;
    await Promise.all(clients);
  }
  return answers;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends `request` until it answers 200, for at most `RECOVERY_MS`; the last answer otherwise. */
async function firstSuccess(request: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  const deadline = performance.now() + RECOVERY_MS;
  for (;;) {
    const res = await request();
    if (res.statusCode === 200 || performance.now() > deadline) {
      expect(res.statusCode, res.body).toBe(200);
      return res;
    }
    await sleep(100);
  }
}

/** Every answer is a success or the documented 503; never a 500. */
function expectOnlySuccessOrUnavailable(answers: Answer[]): void {
  for (const { res } of answers) {
    if (res.statusCode === 200) continue;
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json(), res.body).toEqual({
      detail: 'The database server is unavailable (restarting or unreachable); retry shortly', error: 'DatabaseUnavailable',
    });
    expect(res.headers['retry-after']).toBe('5');
  }
}

/** Requests sent from `recoveryDeadline` on all succeeded, and there were some. */
function expectRecoveredBy(answers: Answer[], recoveryDeadline: number): void {
  const late = answers.filter((a) => a.sentAt >= recoveryDeadline);
  expect(late.length).toBeGreaterThan(CONCURRENCY);
  expect(late.filter((a) => a.res.statusCode !== 200).map((a) => a.res.body)).toEqual([]);
}

describe('the database server going away under traffic', () => {
  it('pg_ctl restart -m fast: 200 or 503 DatabaseUnavailable with Retry-After meanwhile, all 200 within 5 s after', async () => {
    let backAt = Infinity;
    const answers = await underTraffic(async (elapsed) => {
      await sleep(1_000);
      await cluster.restartServer();
      backAt = elapsed();
      await sleep(RECOVERY_MS + 1_500);
    });

    expectOnlySuccessOrUnavailable(answers);
    // The restart was felt: requests cut by the shutdown or refused while it was down.
    expect(answers.filter((a) => a.res.statusCode === 503).length).toBeGreaterThan(0);
    expectRecoveredBy(answers, backAt + RECOVERY_MS);
  });

  it('stop, wait, start: every route answers 503 while down; pools reconnect by themselves once it is up', async () => {
    let downAt = Infinity;
    let startingAt = Infinity;
    let backAt = Infinity;
    const answers = await underTraffic(async (elapsed) => {
      await sleep(500);
      await cluster.stopServer('fast');
      downAt = elapsed();
      await sleep(1_500);
      const down = await Promise.all([
        api('POST', '/api/query/User', { fields: ['name'] }),
        api('POST', '/api/create/SlowProbe', { name: 'while down' }),
        api('GET', '/api/get_registry/User'),
        api('GET', '/altcha/challenge'),
        api('POST', '/auth/authenticate', { email: 'admin@example.com', password: 'restart-admin-password' }),
        api('POST', '/auth/refresh', { refresh_token: 'ffr_x' }),
        api('GET', '/filestore/view/1'),
        api('GET', '/api/files/1/url'),
        app.inject({ method: 'GET', url: `/filestore/view/1?db=${NAME}&expires=1&sig=x` }),
        // A database this worker has not opened yet: even looking it up needs the server.
        api('POST', '/api/query/User', {}, { 'x-db-name': `other_${randomBytes(3).toString('hex')}` }),
      ]);
      startingAt = elapsed(); // the server accepts connections a little before pg_ctl returns
      await cluster.startServer();
      backAt = elapsed();
      for (const res of down) {
        expect(res.statusCode, res.body).toBe(503);
        expect(res.json().error).toBe('DatabaseUnavailable');
        expect(res.headers['retry-after']).toBe('5');
      }
      await sleep(RECOVERY_MS + 1_500);
    });

    expectOnlySuccessOrUnavailable(answers);
    const whileDown = answers.filter((a) => a.sentAt > downAt && a.sentAt < startingAt - 100);
    expect(whileDown.length).toBeGreaterThan(0);
    expect(whileDown.every((a) => a.res.statusCode === 503)).toBe(true);
    expectRecoveredBy(answers, backAt + RECOVERY_MS);
  });

  for (const mode of ['fast', 'immediate'] as const) {
    it(`a request mid-transaction when the server stops (${mode}) answers 503 and leaves nothing written`, async () => {
      const name = `mid ${mode} ${randomBytes(3).toString('hex')}`;
      const inFlight = api('POST', `/api/execute/SlowProbe/note_then_sleep`, { request_body: { inputs: { name, seconds: 5 } } });
      await sleep(700); // the first record is written, the sleep runs
      await cluster.stopServer(mode);
      const res = await inFlight;
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().error).toBe('DatabaseUnavailable');
      await cluster.startServer();

      const written = await firstSuccess(() => api('POST', '/api/query/SlowProbe', { fields: ['name'], filter_str: `Q(name__startswith='${name}')` }));
      expect(written.json()).toEqual([]);
    });
  }
});
