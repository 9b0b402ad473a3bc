/**
 * The request log (issue 10 §8): every answer carries `X-Request-Id` (a proxy's well-formed one is
 * kept), every failed request is logged once — a 500 at `error` with request id, method, route,
 * database, caller, error class, message and stack, a declared 5xx at `warn`, a 4xx at `info`
 * without stack — the level decides what is written, access lines are `debug`, and `pretty` writes
 * for people. The lines are read from a real stream handed to the logger, as JSON.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings, type LogLevel } from '../../src/config/settings.js';
import { buildApp } from '../../src/http/app.js';
import { writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODELS = `
import { Model, UserError, fields } from 'fieldforge';

export class LogProbe extends Model {
  static override _api_methods = ['crash', 'refuse'];
  static override fields = { name: fields.Char() };
  static async crash(): Promise<never> {
    throw new Error('kaboom: internal detail /srv/app/secret.ts');
  }
  static async refuse(): Promise<never> {
    throw new UserError('Probe refused politely');
  }
}
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestDatabase;
let probeRoot: string;
const apps: FastifyInstance[] = [];

beforeAll(async () => {
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-log-probe-'));
  await writeProbeModule(probeRoot, 'log_probe', { 'models/index.ts': PROBE_MODELS });
  t = await testDatabase('core', [probeRoot]);
  await t.platform.install(t.name, { init: ['log_probe'] });
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await t?.close();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

/** A real writable stream collecting what the logger writes, line by line. */
function logSink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines, records: () => lines.map((line) => JSON.parse(line) as Record<string, any>) };
}

async function appLogging(level: LogLevel, format: 'json' | 'pretty' = 'json') {
  const sink = logSink();
  const app = await buildApp(t.platform, { dev: false, logger: { level, format, stream: sink.stream } });
  apps.push(app);
  const call = (method: string, headers: Record<string, string> = {}) => app.inject({
    method: 'POST', url: `/api/execute/LogProbe/${method}`,
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json', ...headers },
    payload: '{}',
  });
  return { app, sink, call };
}

/** Lets the response's own hooks (the access line) run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('a 500', () => {
  it('answers nothing internal and is logged once at error with everything the operator needs', async () => {
    const { sink, call } = await appLogging('info');
    const res = await call('crash');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ detail: 'Internal server error', error: 'InternalError' });
    expect(res.body).not.toContain('kaboom');
    const requestId = res.headers['x-request-id'] as string;
    expect(requestId).toMatch(UUID);
    await settled();
    const lines = sink.records().filter((r) => r.reqId === requestId);
    expect(lines).toHaveLength(1);
    const [line] = lines as [Record<string, any>];
    const uid = (await sql<{ id: number }>`SELECT user_id AS id FROM service_account ORDER BY id LIMIT 1`.execute((await t.platform.database(t.name)).executor)).rows[0]!.id;
    expect(line).toMatchObject({
      level: 50, status: 500, error: 'InternalError', msg: 'kaboom: internal detail /srv/app/secret.ts',
      method: 'POST', route: '/api/execute/:model/:method', url: '/api/execute/LogProbe/crash', db: t.name,
      caller: { uid, service_account: expect.any(Number), session: null },
      err: { type: 'Error', message: 'kaboom: internal detail /srv/app/secret.ts' },
    });
    // The stack says where it happened: the probe's method, in the probe module's file.
    expect(line.err.stack).toContain('kaboom');
    expect(line.err.stack).toMatch(/crash/);
    // At info, Fastify's own per-request lines are not written.
    expect(sink.records().some((r) => r.msg === 'incoming request' || r.msg === 'request completed')).toBe(false);
  });

  it('keeps a well-formed X-Request-Id from a proxy, in the answer and the log line', async () => {
    const { sink, call } = await appLogging('info');
    const traceId = 'Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8';
    const res = await call('crash', { 'x-request-id': traceId });
    expect(res.headers['x-request-id']).toBe(traceId);
    expect(sink.records().filter((r) => r.reqId === traceId && r.level === 50)).toHaveLength(1);
  });

  it('replaces a malformed X-Request-Id by a fresh one', async () => {
    const { sink, call } = await appLogging('info');
    for (const bad of ['has spaces in it', 'x'.repeat(129), '"quoted"', '<script>', '']) {
      const res = await call('crash', { 'x-request-id': bad });
      const id = res.headers['x-request-id'] as string;
      expect(id, bad).toMatch(UUID);
      expect(sink.lines.join('\n')).not.toContain(bad || '""');
      expect(sink.records().filter((r) => r.reqId === id)).toHaveLength(1);
    }
  });
});

describe('other failures', () => {
  it('logs a 4xx once at info, with its class and message but no stack', async () => {
    const { sink, call } = await appLogging('info');
    const res = await call('refuse');
    expect(res.statusCode).toBe(400);
    const id = res.headers['x-request-id'];
    const lines = sink.records().filter((r) => r.reqId === id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, status: 400, error: 'UserError', msg: 'Probe refused politely', db: t.name, method: 'POST' });
    expect(lines[0]!.err).toBeUndefined();
  });

  it('logs a declared 503 (database mid-install) once at warn, with stack and the selected database', async () => {
    const { sink, call } = await appLogging('info');
    const db = (await t.platform.database(t.name)).executor;
    await sql`UPDATE ff_state SET installing = true WHERE id = 1`.execute(db);
    try {
      const res = await call('refuse');
      expect(res.statusCode).toBe(503);
      const lines = sink.records().filter((r) => r.reqId === res.headers['x-request-id']);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 40, status: 503, error: 'DatabaseBusy', db: t.name, caller: null, err: { type: 'DatabaseBusy' } });
      expect(lines[0]!.err.stack).toContain('DatabaseBusy');
    } finally {
      await sql`UPDATE ff_state SET installing = false WHERE id = 1`.execute(db);
    }
  });

  it('writes only what the level lets through: at warn a 4xx is not logged, a 500 is', async () => {
    const { sink, call } = await appLogging('warn');
    const refused = await call('refuse');
    const crashed = await call('crash');
    expect(sink.records().filter((r) => r.reqId === refused.headers['x-request-id'])).toHaveLength(0);
    expect(sink.records().filter((r) => r.reqId === crashed.headers['x-request-id'])).toHaveLength(1);
  });

  it('writes Fastify\'s access lines at debug, without the query string', async () => {
    const { app, sink } = await appLogging('debug');
    const res = await app.inject({ method: 'GET', url: '/health?sig=secret-signature' });
    expect(res.statusCode).toBe(200);
    await settled();
    const lines = sink.records().filter((r) => r.reqId === res.headers['x-request-id']);
    expect(lines.map((r) => [r.level, r.msg])).toEqual([[20, 'incoming request'], [20, 'request completed']]);
    expect(lines[0]!.req).toMatchObject({ method: 'GET', url: '/health' });
    expect(lines[1]!.res).toEqual({ statusCode: 200 });
    expect(sink.lines.join('\n')).not.toContain('secret-signature');
  });
});

describe('X-Request-Id', () => {
  it('is on every answer: success, unknown route, bad JSON, missing credential, too large', async () => {
    const { app } = await appLogging('silent');
    const small = await buildApp(t.platform, { bodyLimit: 100 });
    apps.push(small);
    const json = { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' };
    const answers = [
      await app.inject({ method: 'GET', url: '/health' }),
      await app.inject({ method: 'GET', url: '/no/such/route' }),
      await app.inject({ method: 'POST', url: '/api/query/User', headers: json, payload: '{' }),
      await app.inject({ method: 'POST', url: '/api/query/User', headers: { 'x-db-name': t.name } }),
      await small.inject({ method: 'POST', url: '/api/query/User', headers: json, payload: JSON.stringify({ x: 'y'.repeat(200) }) }),
    ];
    expect(answers.map((r) => r.statusCode)).toEqual([200, 404, 400, 401, 413]);
    for (const res of answers) expect(res.headers['x-request-id']).toMatch(UUID);
    expect(new Set(answers.map((r) => r.headers['x-request-id'])).size).toBe(answers.length);
  });
});

describe('FF_LOG_FORMAT=pretty', () => {
  it('writes lines for people: level name, message, request id and stack, not JSON', async () => {
    const { sink, call } = await appLogging('info', 'pretty');
    const res = await call('crash');
    expect(res.statusCode).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = sink.lines.join('\n');
    expect(text).toContain('ERROR');
    expect(text).toContain('kaboom: internal detail');
    expect(text).toContain(res.headers['x-request-id'] as string);
    expect(text).toMatch(/at .*crash/);
    expect(() => JSON.parse(sink.lines[0]!)).toThrow();
  });
});

describe('FF_LOG_LEVEL', () => {
  it('is info by default, debug with FF_DEV=1, and what it says when set', () => {
    expect(readSettings({}).logLevel).toBe('info');
    expect(readSettings({ FF_DEV: '1' }).logLevel).toBe('debug');
    expect(readSettings({ FF_DEV: '1', FF_LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
    expect(readSettings({ FF_LOG_LEVEL: 'ERROR' }).logLevel).toBe('error');
    expect(() => readSettings({ FF_LOG_LEVEL: 'loud' })).toThrow(/FF_LOG_LEVEL must be one of/);
    expect(readSettings({ FF_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
  });
});
