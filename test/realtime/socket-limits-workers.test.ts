/**
 * The socket limits of CONTRACTS C4 across workers: workers in this process — platforms over one
 * database, each with its own Redis connections and socket hub, as `serve --workers` runs them —
 * and a Redis server of the test's own. A user's open sockets are counted over every worker: one
 * more is refused (error frame, 4029) on whichever worker it reaches, and a place freed on one
 * worker is taken on another; keeping the counts costs one Redis call per database per sweep. A worker that vanishes without releasing its places (cut off from
 * Redis, its sockets dropped) stops counting once its lease runs out. While Redis is away each
 * worker holds the limit for its own sockets; once Redis is back (its memory lost) the workers'
 * counts are whole again, and the limit holds over all of them.
 */
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { RedisBus } from '../../src/realtime/redis-bus.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { TestRedis } from '../support/redis-server.js';
import { TestSocket, type Frame } from '../support/socket-client.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

interface Worker {
  bus: RedisBus;
  app: FastifyInstance;
  url: string;
}

let t: TestDatabase;
let redis: TestRedis;
const workers: Worker[] = [];
const PER_USER = 3;
const LEASE_MS = 1_500;
const PREFIX = 'fflimits:';

async function startWorker(): Promise<Worker> {
  const bus = new RedisBus(redis.url, PREFIX);
  const platform = new Platform(t.engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]), t.platform.secret, null, bus);
  const app = await buildApp(platform, { realtime: { checkIntervalMs: 300, maxSocketsPerUser: PER_USER, socketLeaseMs: LEASE_MS } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { bus, app, url: `ws://127.0.0.1:${(app.server.address() as { port: number }).port}/api/ws?db=${t.name}` };
}

async function stopWorker(w: Worker): Promise<void> {
  await w.app.close();
  await w.bus.close();
}

/** A fresh service account's key: its sockets count for its own user. */
async function program(name: string): Promise<string> {
  return (await t.run(() => createServiceAccountKey({ name, groups: ['core.group_user'] }))).key;
}

const attempt = (w: Worker, key: string) => TestSocket.attempt(w.url, { authorization: `Bearer ${key}` });

async function accepted(w: Worker, key: string): Promise<TestSocket> {
  const answer = await attempt(w, key);
  if (!(answer instanceof TestSocket)) throw new Error(`refused: ${JSON.stringify(answer)}`);
  return answer;
}

async function refused(w: Worker, key: string): Promise<{ frames: Frame[]; code: number }> {
  const answer = await attempt(w, key);
  if (answer instanceof TestSocket) {
    await answer.close();
    throw new Error(`accepted on worker ${answer.worker}`);
  }
  expect(answer.code).toBe(4029);
  expect(answer.frames).toEqual([{ type: 'error', data: { detail: expect.stringContaining('FF_WS_MAX_SOCKETS_PER_USER'), error: 'TooManySockets' } }]);
  return answer;
}

/** Tries until the worker accepts the socket. */
async function acceptedWithin(w: Worker, key: string, ms: number): Promise<TestSocket> {
  const started = Date.now();
  for (;;) {
    const answer = await attempt(w, key);
    if (answer instanceof TestSocket) return answer;
    if (Date.now() - started > ms) throw new Error(`still refused after ${ms} ms: ${JSON.stringify(answer)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  redis = await TestRedis.start();
  t = await testDatabase('full');
  workers.push(await startWorker(), await startWorker());
});
afterAll(async () => {
  for (const w of workers) await stopWorker(w);
  await t?.close();
  await redis?.stop();
});

describe('socket limits over two workers', () => {
  it('refuses one more socket of a user on either worker; a place freed on one is taken on the other; another user is unaffected', async () => {
    const [w1, w2] = workers as [Worker, Worker];
    const key = await program('limited on two workers');
    const sockets = [await accepted(w1, key), await accepted(w1, key), await accepted(w2, key)];
    expect(new Set(sockets.map((s) => s.worker)).size).toBe(2);
    await refused(w1, key);
    await refused(w2, key);
    // Another user has places of its own on both workers.
    const other = await program('unaffected');
    const others = [await accepted(w1, other), await accepted(w2, other)];

    // Freed on worker 1, taken on worker 2; then full again.
    await sockets.shift()!.close();
    sockets.push(await acceptedWithin(w2, key, 3_000));
    await refused(w1, key);
    await Promise.all([...sockets, ...others].map((s) => s.close()));

    // Nothing is left behind in Redis: the closed sockets' counts are gone.
    const inspect = new Redis(redis.url);
    try {
      const deadline = Date.now() + 3_000;
      let counts: Record<string, string>[] = [];
      do {
        counts = await Promise.all(workers.map((w) => inspect.hgetall(`${PREFIX}sockets:${t.name}:${w.app.realtime.id}`)));
        if (counts.every((c) => !Object.keys(c).length)) break;
        await new Promise((r) => setTimeout(r, 100));
      } while (Date.now() < deadline);
      expect(counts).toEqual([{}, {}]);
    } finally {
      inspect.disconnect();
    }
  });

  it('renews each worker’s counts with one Redis call per database per sweep, whatever the number of sockets', async () => {
    const keys = await Promise.all([1, 2, 3, 4].map((i) => program(`renewed ${i}`)));
    const sockets: TestSocket[] = [];
    for (const key of keys) for (let i = 0; i < PER_USER; i++) sockets.push(await accepted(workers[i % 2]!, key));
    // ZADD is the lease renewal (presence, for API keys, adds nothing): count it over a while idle.
    const inspect = new Redis(redis.url);
    const zadds = async () => Number(/^cmdstat_zadd:calls=(\d+)/m.exec(await inspect.info('commandstats'))?.[1] ?? 0);
    try {
      const before = await zadds();
      const started = Date.now();
      await new Promise((r) => setTimeout(r, 1_500));
      const renewals = (await zadds()) - before;
      const sweeps = Math.ceil((Date.now() - started) / 300) + 1; // per worker, one sweep every 300 ms
      expect(renewals).toBeGreaterThan(0);
      expect(renewals).toBeLessThanOrEqual(2 * sweeps); // not one per socket (12 sockets)
    } finally {
      inspect.disconnect();
    }
    await Promise.all(sockets.map((s) => s.close()));
  });

  it('stops counting the sockets of a worker that vanished once its lease runs out', async () => {
    const [w1] = workers as [Worker, Worker];
    const doomed = await startWorker();
    const key = await program('on a vanishing worker');
    const gone = [await accepted(doomed, key), await accepted(doomed, key)];
    const kept = await accepted(w1, key);
    await refused(w1, key);
    // Cut off from Redis, then its sockets dropped: it never tells Redis they left.
    const cutAt = Date.now();
    await doomed.bus.close();
    await doomed.app.close();
    for (const s of gone) await s.closedWith();
    await refused(w1, key); // its places still count, for now
    const socket = await acceptedWithin(w1, key, LEASE_MS + 3_000);
    // Not before the lease ran out: it counts from the last renewal, at most a sweep (300 ms) before the cut.
    expect(Date.now() - cutAt).toBeGreaterThan(LEASE_MS - 300 - 100);
    await Promise.all([kept.close(), socket.close()]);
  });

  it('holds the limit per worker while Redis is away, and over both workers again once it is back', async () => {
    const [w1, w2] = workers as [Worker, Worker];
    const key = await program('through an outage');
    const before = await accepted(w1, key);
    await redis.stop();
    const during: TestSocket[] = [];
    try {
      // Worker 1 counts its own sockets: two more, then the limit.
      during.push(await accepted(w1, key), await accepted(w1, key));
      await refused(w1, key);
      // Worker 2 knows nothing of them while Redis is away: its own three places.
      during.push(await accepted(w2, key), await accepted(w2, key), await accepted(w2, key));
      await refused(w2, key);
    } finally {
      await redis.restart();
    }
    // Redis came back empty. Worker 2's sockets leave: worker 1's three still fill the user's places
    // once worker 1 has sent its counts again (until then worker 2 may take one: tried again).
    for (const s of during.splice(2)) await s.close();
    const deadline = Date.now() + 8_000;
    for (;;) {
      try {
        await refused(w2, key);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    // One of worker 1's leaves: one place, taken on worker 2; then full on both.
    await during.pop()!.close();
    const taken = await acceptedWithin(w2, key, 3_000);
    await refused(w1, key);
    await refused(w2, key);
    await Promise.all([before, ...during, taken].map((s) => s.close()));
  });
});
