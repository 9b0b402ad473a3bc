/**
 * The per-database gate of record-changed pings across workers (spec §6.3, CONTRACTS C4): two
 * workers in this process — two platforms over one database, each with its own connection pool,
 * Redis connections and socket hub — and a Redis server of the test's own, whose `INFO commandstats` counts what
 * the writes cost. With nobody watching, a write sends no Redis command beyond the worker's cached
 * gate check (one EXISTS per database per ~2 s) and not one SQL statement more than without the
 * feed; with a watcher, a write is one PUBLISH and two SELECTs more (the written columns before the
 * UPDATE, the editor's name after the commit), and its ping crosses to the
 * watcher's worker. A watch made while a writer's cached answer is stale is caught up: the ping
 * comes about 2 s late, never not at all.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { RedisBus } from '../../src/realtime/redis-bus.js';
import { CHANGE_PROBE, CHANGE_PROBE_ACCESS } from '../support/change-probe.js';
import { writeProbeModule } from '../support/probe-module.js';
import { TestRedis } from '../support/redis-server.js';
import { TestSocket } from '../support/socket-client.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

interface Worker {
  engine: PostgresEngine;
  platform: Platform;
  bus: RedisBus;
  app: FastifyInstance;
  url: string;
}

let t: TestDatabase;
let redis: TestRedis;
let stats: Redis;
let probeRoot: string;
const workers: Worker[] = [];

/** A worker as `serve --workers` runs one: its own connection pool, Redis connections and sockets. */
async function startWorker(): Promise<Worker> {
  const engine = new PostgresEngine({ url: TEST_DATABASE_URL });
  const bus = new RedisBus(redis.url, 'fftest:');
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR, probeRoot]), t.platform.secret, null, bus);
  const app = await buildApp(platform, { realtime: { checkIntervalMs: 300 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { engine, platform, bus, app, url: `ws://127.0.0.1:${(app.server.address() as { port: number }).port}/api/ws?db=${t.name}` };
}

function api(w: Worker, method: 'POST' | 'PUT', url: string, body: unknown) {
  return w.app.inject({
    method, url, payload: JSON.stringify(body),
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
  });
}

async function update(w: Worker, id: number, vals: Record<string, unknown>): Promise<void> {
  const res = await api(w, 'PUT', `/api/update/ChangeProbe/${id}`, vals);
  expect(res.statusCode, res.body).toBe(200);
}

/** Calls per Redis command since the server started (`INFO commandstats`, the INFO itself excluded). */
async function commandCounts(): Promise<Record<string, number>> {
  const info = await stats.info('commandstats');
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

async function commandsDuring(fn: () => Promise<void>): Promise<Record<string, number>> {
  const before = await commandCounts();
  await fn();
  const after = await commandCounts();
  const delta: Record<string, number> = {};
  for (const [name, n] of Object.entries(after)) if (name !== 'info' && n - (before[name] ?? 0) > 0) delta[name] = n - (before[name] ?? 0);
  return delta;
}

function pings(socket: TestSocket, id: number): Record<string, any>[] {
  return socket.frames.filter((f) => f.type === 'activity_update' && f.data.kind === 'record_changed' && f.data.id === id).map((f) => f.data);
}

async function watch(w: Worker, socket: TestSocket, id: number): Promise<void> {
  socket.send({ type: 'watch', data: { model: 'ChangeProbe', id } });
  await socket.until(() => w.app.realtime.watchersOf(t.name, 'ChangeProbe', id).size > 0, 3_000, 'watch');
}

let probes: number[];

/** Waits until no worker holds a watch (a closed socket's watches are forgotten on its close event). */
async function noWatchers(): Promise<void> {
  for (let i = 0; i < 100 && workers.some((w) => w.app.realtime.hasWatchers(t.name)); i++) await new Promise((r) => setTimeout(r, 30));
  expect(workers.some((w) => w.app.realtime.hasWatchers(t.name))).toBe(false);
}

beforeAll(async () => {
  redis = await TestRedis.start();
  stats = new Redis(redis.url);
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-gate-probe-'));
  await writeProbeModule(probeRoot, 'change_probe', { 'models/index.ts': CHANGE_PROBE, 'security/access.yaml': CHANGE_PROBE_ACCESS });
  t = await testDatabase('full', [probeRoot]);
  await t.platform.install(t.name, { init: ['change_probe'] });
  workers.push(await startWorker(), await startWorker());
  const created = await api(workers[0]!, 'POST', '/api/bulk-create/ChangeProbe', [1, 2, 3, 4].map((i) => ({ name: `P${i}`, qty: i })));
  probes = created.json().map((r: { id: number }) => r.id);
});
afterAll(async () => {
  for (const w of workers) {
    await w.app.close();
    await w.bus.close();
    await w.engine.close();
  }
  stats?.disconnect();
  await t?.close();
  await redis?.stop();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

describe('the gate across workers', () => {
  it('costs no Redis command and no statement per write while nobody watches; a watched write is one PUBLISH and two SELECTs, delivered across workers', async () => {
    const [a, b] = workers as [Worker, Worker];
    const id = probes[0]!;
    await update(a, id, { qty: 100 }); // the worker caches its answer (dark)
    const writes = 20;
    const started = Date.now();
    const dark = await commandsDuring(async () => {
      for (let i = 1; i <= writes; i++) await update(a, id, { qty: 100 + i });
    });
    const elapsed = Date.now() - started;
    // At most one EXISTS per ~2 s of writing (the cache's refresh), nothing else.
    expect(Object.keys(dark).filter((c) => c !== 'exists')).toEqual([]);
    expect(dark.exists ?? 0).toBeLessThanOrEqual(Math.ceil(elapsed / 2_000));
    // Worker a's own pool: worker b's sweeps and catch-up reads are not counted.
    const database = await a.platform.database(t.name);
    /** Statements of one update, up to `settled` (the ping's arrival: the editor's name is read after the commit). */
    const count = async (w: Worker, qty: number, settled?: () => Promise<void>) => {
      let n = 0;
      const off = database.onStatement(() => n++);
      try {
        await update(w, id, { qty });
        await settled?.();
      } finally {
        off();
      }
      return n;
    };
    const darkStatements = await count(a, 200);

    const socket = await TestSocket.open(b.url, { authorization: `Bearer ${t.apiKey}` });
    await watch(b, socket, id);
    // Worker a's cached (dark) answer expires within 2 s; from then on it sees the gate lit.
    await new Promise((r) => setTimeout(r, 2_200));
    await update(a, id, { qty: 300 });
    await socket.until(() => pings(socket, id).length >= 1, 5_000, 'first ping');
    const lit = await commandsDuring(async () => {
      for (let i = 1; i <= writes; i++) await update(a, id, { qty: 300 + i });
      await socket.until(() => pings(socket, id).length >= writes + 1, 5_000, 'pings');
    });
    expect(lit.publish).toBe(writes);
    expect(lit.exists ?? 0).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 2_000));
    const litStatements = await count(a, 400, () => socket.until(() => pings(socket, id).length >= writes + 2, 5_000, 'last ping'));
    // One SELECT of the written columns in the transaction (carrying the request guard, as the
    // UPDATE did unwatched), one of the editor's name after the commit.
    expect(litStatements).toBe(darkStatements + 2);
    expect(pings(socket, id).at(-1)).toMatchObject({ model: 'ChangeProbe', id, fields: ['qty'], updated_by: { id: expect.any(Number) } });
    expect(socket.worker).toBe(b.app.realtime.id);
    console.log(`per write: nobody watching ${JSON.stringify(dark)} over ${writes} writes in ${elapsed} ms, ${darkStatements} statements; `
      + `watched ${JSON.stringify(lit)} over ${writes} writes, ${litStatements} statements`);
    await socket.close();
  });

  it('catches up a watch made while a writer’s cached answer is stale: the ping comes about 2 s late, once', async () => {
    const [a, b] = workers as [Worker, Worker];
    const id = probes[1]!;
    const other = probes[2]!;
    // Nobody watches this database any more: put the gate out, then let worker a cache "dark".
    await noWatchers();
    const key = `fftest:watched:${t.name}`;
    await stats.del(key);
    await new Promise((r) => setTimeout(r, 2_200));
    await update(a, other, { qty: 7 });
    expect(a.bus.watchGate.isLit(t.name)).toBe(false);

    const socket = await TestSocket.open(b.url, { authorization: `Bearer ${t.apiKey}` });
    await watch(b, socket, id);
    expect(await stats.exists(key)).toBe(1);
    const writtenAt = Date.now();
    await update(a, id, { name: 'Written in the dark' }); // a still trusts its dark answer
    expect(a.bus.watchGate.isLit(t.name)).toBe(false);
    await socket.until(() => pings(socket, id).length >= 1, 6_000, 'caught-up ping');
    const ping = pings(socket, id)[0]!;
    expect(ping).toMatchObject({ kind: 'record_changed', model: 'ChangeProbe', id, fields: ['name'], updated_by: { id: expect.any(Number) } });
    const arrived = socket.arrivedAt[socket.frames.findIndex((f) => f.data.kind === 'record_changed')]!;
    expect(arrived - writtenAt).toBeGreaterThan(1_000);
    expect(arrived - writtenAt).toBeLessThan(4_000);
    // Once: a later write pings as usual, and the catch-up does not repeat.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(pings(socket, id)).toHaveLength(1);
    await update(a, id, { qty: 99 });
    await socket.until(() => pings(socket, id).length >= 2, 5_000, 'ordinary ping');
    expect(pings(socket, id)[1]!.fields).toEqual(['qty']);
    await socket.close();
  });

  it('a watch with no stale writer left is not caught up twice: a ping delivered meanwhile counts', async () => {
    const [a, b] = workers as [Worker, Worker];
    const id = probes[3]!;
    const socket = await TestSocket.open(b.url, { authorization: `Bearer ${t.apiKey}` });
    await noWatchers();
    const key = `fftest:watched:${t.name}`;
    await stats.del(key);
    await new Promise((r) => setTimeout(r, 2_200));
    // Worker b lights the gate and knows it at once: its own write is pinged immediately.
    await watch(b, socket, id);
    await update(b, id, { qty: 50 });
    await socket.until(() => pings(socket, id).length >= 1, 3_000, 'immediate ping');
    await new Promise((r) => setTimeout(r, 3_000)); // past the catch-up
    expect(pings(socket, id)).toHaveLength(1);
    await update(a, id, { qty: 51 }); // and worker a, asking Redis afresh, sees it lit
    await socket.until(() => pings(socket, id).length >= 2, 3_000, 'ping from the other worker');
    await socket.close();
  });
});
