/**
 * The Redis bus (CONTRACTS C4 "Delivery", "Scale"): two workers in this process — two platforms
 * over one database, each with its own Redis connections and socket hub — and a Redis server of
 * the test's own, so the test may stop and restart it. Every frame type crosses from one worker
 * to the other; presence counts a user's sockets on both workers as one; with Redis gone HTTP
 * keeps answering, a push does not fail its request and a worker still serves its own sockets;
 * once Redis is back the bus reconnects by itself and presence is rebuilt from the heartbeats.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { openSession } from '../../src/auth/sessions.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { RedisBus } from '../../src/realtime/redis-bus.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { TestRedis } from '../support/redis-server.js';
import { TestSocket } from '../support/socket-client.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { REALTIME_PROBE } from '../support/realtime-probe.js';

interface Worker {
  platform: Platform;
  bus: RedisBus;
  app: FastifyInstance;
  url: string;
}

let t: TestDatabase;
let redis: TestRedis;
let probeRoot: string;
const workers: Worker[] = [];
const PEOPLE = ['core.group_user', 'contacts.group_contacts_user'];

async function startWorker(): Promise<Worker> {
  const bus = new RedisBus(redis.url, 'fftest:');
  const platform = new Platform(t.engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR, probeRoot]), t.platform.secret, null, bus);
  const app = await buildApp(platform, { realtime: { checkIntervalMs: 300 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { platform, bus, app, url: `ws://127.0.0.1:${(app.server.address() as { port: number }).port}/api/ws?db=${t.name}` };
}

async function person(name: string): Promise<{ uid: number; token: string }> {
  return t.run(async () => {
    const groups = await Group.query({ identifier__in: PEOPLE }).ids();
    const user = await User.create({ name, email: `${name.toLowerCase().replace(/\W/g, '')}@example.test`, password: 'redis-bus-pass-42', groups });
    const tokens = await openSession(user.id, { dbName: t.name, secret: t.platform.secret, sessionHours: 8 });
    return { uid: user.id, token: tokens.access_token };
  });
}

function api(w: Worker, method: 'GET' | 'POST', url: string, body?: unknown, token = t.apiKey) {
  return w.app.inject({
    method, url,
    headers: { authorization: `Bearer ${token}`, 'x-db-name': t.name, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

const push = (w: Worker, uid: number, tag: string) => api(w, 'POST', '/api/execute/RealtimeProbe/push', { request_body: { inputs: { user_id: uid, tag } } });

beforeAll(async () => {
  redis = await TestRedis.start();
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-redis-probe-'));
  await writeProbeModule(probeRoot, 'realtime_probe', { 'models/index.ts': REALTIME_PROBE, 'security/access.yaml': adminAccessYaml(['RealtimeProbe']) });
  t = await testDatabase('full', [probeRoot]);
  await t.platform.install(t.name, { init: ['realtime_probe'] });
  workers.push(await startWorker(), await startWorker());
});
afterAll(async () => {
  for (const w of workers) {
    await w.app.close();
    await w.bus.close();
  }
  await t?.close();
  await redis?.stop();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

describe('two workers over Redis', () => {
  it('carries notification, activity_update, client actions and import progress from one worker to the other', async () => {
    const [w1, w2] = workers as [Worker, Worker];
    const p = await person('Across');
    const socket = await TestSocket.open(w1.url, { authorization: `Bearer ${p.token}` });
    const program = await TestSocket.open(w1.url, { authorization: `Bearer ${t.apiKey}` });
    expect((await push(w2, p.uid, 'across')).statusCode).toBe(200);
    expect((await socket.next((f) => f.type === 'notification')).data).toEqual({ title: 'Probe', message: 'across', icon: 'bell' });
    expect((await socket.next((f) => f.type === 'activity_update')).data).toEqual({ kind: 'message', body: 'across' });
    expect((await socket.next((f) => f.data.event === 'client_action')).data.action).toEqual({ type: 'reload', tag: 'across' });

    const imported = await api(w2, 'POST', '/api/import/Contact', { fields: ['name'], data: [['Name'], ['Across one'], ['Across two']], progress_id: 'across' });
    expect(imported.statusCode, imported.body).toBe(200);
    await program.until(() => program.events('import_progress').some((e) => e.done === 2), 5_000, 'import progress');
    expect(program.events('import_progress').at(-1)).toEqual({ event: 'import_progress', progress_id: 'across', model: 'Contact', done: 2, total: 2 });
    await Promise.all([socket.close(), program.close()]);
  });

  it('counts a user’s sockets on both workers as one presence, pushed across workers', async () => {
    const [w1, w2] = workers as [Worker, Worker];
    const a = await person('Watcher of presence');
    const b = await person('Two workers');
    const sa = await TestSocket.open(w1.url, { authorization: `Bearer ${a.token}` });
    const b2 = await TestSocket.open(w2.url, { authorization: `Bearer ${b.token}` });
    await sa.next((f) => f.data.event === 'presence' && f.data.user_id === b.uid && f.data.online);
    const b1 = await TestSocket.open(w1.url, { authorization: `Bearer ${b.token}` });
    expect((await api(w2, 'GET', '/api/chat/presence', undefined, a.token)).json()).toEqual([a.uid, b.uid].sort((x, y) => x - y));
    await b2.close();
    await new Promise((r) => setTimeout(r, 400));
    expect(sa.events('presence').filter((e) => e.user_id === b.uid)).toHaveLength(1);
    await b1.close();
    await sa.until(() => sa.events('presence').some((e) => e.user_id === b.uid && !e.online), 3_000, 'offline');
    expect((await api(w1, 'GET', '/api/chat/presence', undefined, a.token)).json()).toEqual([a.uid]);
    await sa.close();
  });

  it('keeps HTTP answering while Redis is down, and delivers again once it is back, with presence rebuilt', async () => {
    const [w1, w2] = workers as [Worker, Worker];
    const p = await person('Outage');
    const far = await TestSocket.open(w1.url, { authorization: `Bearer ${p.token}` });
    const near = await TestSocket.open(w2.url, { authorization: `Bearer ${p.token}` });
    const heartbeat = setInterval(() => far.send({ type: 'heartbeat' }), 200);
    try {
      await redis.stop();
      const query = await api(w2, 'POST', '/api/query/Contact', { fields: ['name'], limit: 1 });
      expect(query.statusCode).toBe(200);
      const started = Date.now();
      const sent = await push(w2, p.uid, 'during outage');
      expect(sent.statusCode, sent.body).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000); // the push did not wait for Redis
      // The worker that sent still serves its own socket.
      await near.next((f) => f.data.message === 'during outage');
      const presence = await api(w2, 'GET', '/api/chat/presence', undefined, p.token);
      expect([503, 200]).toContain(presence.statusCode);
      if (presence.statusCode === 503) expect(presence.json()).toEqual({ detail: expect.any(String), error: 'RealtimeUnavailable' });

      await redis.restart();
      // The bus reconnects by itself: pushes cross again.
      let n = 0;
      await far.until(() => {
        if (far.frames.some((f) => f.data.message?.startsWith('after outage'))) return true;
        void push(w2, p.uid, `after outage ${n++}`);
        return false;
      }, 15_000, 'delivery after the restart');
      // Presence, lost with Redis's memory, is rebuilt from the next heartbeats.
      let online: number[] = [];
      const deadline = Date.now() + 5_000;
      while (!online.includes(p.uid) && Date.now() < deadline) {
        const res = await api(w1, 'GET', '/api/chat/presence', undefined, p.token);
        online = res.statusCode === 200 ? res.json() : [];
        if (!online.includes(p.uid)) await new Promise((r) => setTimeout(r, 200));
      }
      expect(online).toContain(p.uid);
    } finally {
      clearInterval(heartbeat);
    }
    await Promise.all([far.close(), near.close()]);
  });
});
