/**
 * The main realtime socket `GET /api/ws` (CONTRACTS C4) on one worker with the in-process bus,
 * over real WebSockets: refusals of the upgrade, `hello` first, error frames for malformed frames,
 * the size and flood bounds, the 4001 close on revocation, sign-out and deactivation, watches,
 * the send API from a model method (after commit only), import progress frames during the import,
 * presence with its transitions and lapse, and the isolation of databases.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { createServiceAccountKey, revokeApiKey } from '../../src/auth/api-keys.js';
import { openSession } from '../../src/auth/sessions.js';
import { buildApp } from '../../src/http/app.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { REALTIME_PROBE } from '../support/realtime-probe.js';
import { TestSocket } from '../support/socket-client.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';


let t: TestDatabase;
let app: FastifyInstance;
let probeRoot: string;
let base: string;
let other: string; // a second database on the same platform and bus
const PASSWORD = 'realtime-socket-pass-42';

interface Person {
  uid: number;
  token: string;
  sessionId: number;
}

async function person(name: string, groups: string[], db = t.name): Promise<Person> {
  return t.platform.run(db, {}, async () => {
    const groupIds = await Group.query({ identifier__in: groups }).ids();
    const user = await User.create({ name, email: `${name.toLowerCase().replace(/\W/g, '')}-${db}@example.test`, password: PASSWORD, groups: groupIds });
    const tokens = await openSession(user.id, { dbName: db, secret: t.platform.secret, sessionHours: 8 });
    const sessionId = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()).sid as number;
    return { uid: user.id, token: tokens.access_token, sessionId };
  });
}

const PEOPLE = ['core.group_user', 'contacts.group_contacts_user'];

function open(token: string, db = t.name, headers: Record<string, string> = {}): Promise<TestSocket> {
  return TestSocket.open(`${base}/api/ws?db=${db}`, { authorization: `Bearer ${token}`, ...headers });
}

function api(method: 'GET' | 'POST', url: string, token: string, body?: unknown) {
  return app.inject({
    method, url,
    headers: { authorization: `Bearer ${token}`, 'x-db-name': t.name, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

beforeAll(async () => {
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-realtime-probe-'));
  await writeProbeModule(probeRoot, 'realtime_probe', { 'models/index.ts': REALTIME_PROBE, 'security/access.yaml': adminAccessYaml(['RealtimeProbe']) });
  t = await testDatabase('full', [probeRoot]);
  await t.platform.install(t.name, { init: ['realtime_probe'] });
  other = `${t.name}_b`;
  await t.engine.clone(inject('templates').full.database, other);
  app = await buildApp(t.platform);
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await app?.close();
  await t?.engine.drop(other).catch(() => {});
  await t?.close();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

describe('the upgrade', () => {
  it('is refused 401 without or with a bad credential, 400 for a malformed database, 404 for an unknown one', async () => {
    const noCredential = await TestSocket.refusal(`${base}/api/ws?db=${t.name}`);
    expect(noCredential.status).toBe(401);
    expect(noCredential.body).toEqual({ detail: expect.any(String), error: 'AuthenticationError' });
    expect((await TestSocket.refusal(`${base}/api/ws?db=${t.name}`, { authorization: 'Bearer ff_not-a-key' })).status).toBe(401);
    expect((await TestSocket.refusal(`${base}/api/ws?db=${t.name}`, { authorization: 'Bearer not.a.jwt' })).status).toBe(401);
    const malformed = await TestSocket.refusal(`${base}/api/ws?db=Bad%20Name!`, { authorization: `Bearer ${t.apiKey}` });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBeTypeOf('string');
    const unknown = await TestSocket.refusal(`${base}/api/ws?db=fft_nosuchdb`, { authorization: `Bearer ${t.apiKey}` });
    expect(unknown).toEqual({ status: 404, body: { detail: expect.any(String), error: 'DatabaseNotFound' } });
    // The header wins over the query, as for HTTP.
    const socket = await TestSocket.open(`${base}/api/ws?db=fft_nosuchdb`, { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name });
    expect(socket.frames[0]!.data.db).toBe(t.name);
    await socket.close();
  });

  it('takes the session cookie only with an Origin of the same host (403 otherwise)', async () => {
    const p = await person('Cookie Person', PEOPLE);
    const url = `${base}/api/ws?db=${t.name}`;
    const cookie = `ff_session=${p.token}`;
    const host = new URL(base).host;
    expect((await TestSocket.refusal(url, { cookie, origin: 'http://evil.example' })).status).toBe(403);
    const missing = await TestSocket.refusal(url, { cookie });
    expect(missing).toEqual({ status: 403, body: { detail: expect.any(String), error: 'AccessError' } });
    expect((await TestSocket.refusal(url, { cookie: 'ff_session=forged', origin: `http://${host}` })).status).toBe(401);
    const socket = await TestSocket.open(url, { cookie, origin: `http://${host}` });
    expect(socket.frames[0]).toEqual({ type: 'realtime_data', data: { event: 'hello', user_id: p.uid, db: t.name } });
    await socket.close();
  });

  it('confirms a key this worker remembers with one statement, and refuses it with 401 once revoked', async () => {
    const { key, apiKeyId } = await t.run(() => createServiceAccountKey({ name: 'Remembered socket', groups: PEOPLE }));
    const url = `${base}/api/ws?db=${t.name}`;
    // The first upgrade resolves the key in full; the worker remembers it.
    await (await TestSocket.open(url, { authorization: `Bearer ${key}` })).close();
    let socket: TestSocket | undefined;
    const counted = await t.countStatements(async () => {
      socket = await TestSocket.open(url, { authorization: `Bearer ${key}` });
    });
    // The guard alone: no look-up of the key, its groups, companies, rights and rules per socket.
    expect(counted.statements, counted.statements.join('\n')).toEqual([expect.stringMatching(/^SELECT ff_request_guard\(/)]);
    await socket!.close();
    await t.run(() => revokeApiKey(apiKeyId));
    const refused = await TestSocket.refusal(url, { authorization: `Bearer ${key}` });
    expect(refused).toEqual({ status: 401, body: { detail: 'Invalid, revoked or expired credential', error: 'AuthenticationError' } });
  });

  it('says hello first, with the API key’s service account as user_id', async () => {
    const socket = await open(t.apiKey);
    const admin = await t.run(async () => (await User.query({ is_service_account: true }).order_by('id ASC').ids())[0]);
    expect(socket.frames).toEqual([{ type: 'realtime_data', data: { event: 'hello', user_id: admin, db: t.name } }]);
    await socket.close();
  });
});

describe('frames from the client', () => {
  it('answers malformed frames with error frames and keeps the socket open', async () => {
    const socket = await open(t.apiKey);
    const bad = ['not json', '[1,2]', '{"data":{}}', '{"type":"launch"}', '{"type":"watch","data":{"model":"Contact","id":"1"}}',
      '{"type":"watch","data":{"model":"x; DROP","id":1}}', '{"type":"unwatch"}', 'null'];
    for (const frame of bad) socket.send(frame);
    socket.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    await socket.until(() => socket.frames.filter((f) => f.type === 'error').length === bad.length + 1, 5_000, 'error frames');
    for (const f of socket.frames.filter((f) => f.type === 'error')) expect(f.data).toEqual({ detail: expect.any(String) });
    socket.send({ type: 'heartbeat' });
    await new Promise((r) => setTimeout(r, 200));
    expect(socket.closed).toBeNull();
    expect(socket.frames.filter((f) => f.type === 'error')).toHaveLength(bad.length + 1); // a heartbeat is not answered
    await socket.close();
  });

  it('closes with 1009 on a frame over 64 KiB; a frame just under is only an error', async () => {
    const socket = await open(t.apiKey);
    socket.send('x'.repeat(64 * 1024 - 10));
    await socket.next((f) => f.type === 'error');
    socket.send('x'.repeat(64 * 1024 + 1));
    expect((await socket.closedWith()).code).toBe(1009);
  });

  it('closes a client flooding more than 50 frames a second for several seconds with 1008; a busy but fair one stays', async () => {
    const flooder = await open(t.apiKey);
    const fair = await open(t.apiKey);
    const started = Date.now();
    const timer = setInterval(() => {
      if (!flooder.closed) for (let i = 0; i < 20; i++) flooder.send({ type: 'heartbeat' }); // ~200 frames/s
      if (!fair.closed) for (let i = 0; i < 4; i++) fair.send({ type: 'heartbeat' }); // ~40 frames/s
    }, 100);
    try {
      const closed = await flooder.closedWith(8_000);
      expect(closed.code).toBe(1008);
      // "Several seconds" (three over the rate in a row, the first one partly): not at the first burst.
      expect(Date.now() - started).toBeGreaterThan(1_900);
    } finally {
      clearInterval(timer);
    }
    expect(fair.closed).toBeNull();
    await fair.close();
  });
});

describe('revocation', () => {
  it('closes with 4001 within 5 s: a revoked key, a signed-out session, a deactivated user; others stay', async () => {
    const { key, apiKeyId } = await t.run(() => createServiceAccountKey({ name: 'revoked socket', groups: ['core.group_user'] }));
    const signedOut = await person('Signed Out', PEOPLE);
    const deactivated = await person('Deactivated', PEOPLE);
    const stays = await person('Stays', PEOPLE);
    const sockets = await Promise.all([open(key), open(signedOut.token), open(deactivated.token), open(stays.token), open(t.apiKey)]);
    const started = Date.now();
    await t.run(() => revokeApiKey(apiKeyId));
    expect((await api('POST', '/auth/logout', signedOut.token)).statusCode).toBe(200);
    await t.run(() => User.query({ id: deactivated.uid }).update({ active: false }));
    for (const s of sockets.slice(0, 3)) expect((await s.closedWith(5_500)).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sockets[3]!.closed).toBeNull();
    expect(sockets[4]!.closed).toBeNull();
    // The refused credential cannot open a new one either.
    expect((await TestSocket.refusal(`${base}/api/ws?db=${t.name}`, { authorization: `Bearer ${key}` })).status).toBe(401);
    await Promise.all(sockets.slice(3).map((s) => s.close()));
  });
});

describe('watches', () => {
  it('accepts a readable record, refuses one the user cannot read, and forgets watches on unwatch and disconnect', async () => {
    const reader = await person('Watcher', PEOPLE);
    const outsider = await person('Outsider', ['core.group_user']);
    const contact = await t.run(async () => (await Contact.create({ name: 'Watched contact' })).id);
    const socket = await open(reader.token);
    socket.send({ type: 'watch', data: { model: 'Contact', id: contact } });
    await socket.until(() => app.realtime.watchersOf(t.name, 'Contact', contact).size === 1, 3_000, 'watch');
    socket.send({ type: 'watch', data: { model: 'Contact', id: 999_999 } });
    socket.send({ type: 'watch', data: { model: 'NoSuchModel', id: 1 } });
    await socket.until(() => socket.frames.filter((f) => f.type === 'error').length === 2, 3_000, 'refusals');
    expect(socket.frames.filter((f) => f.type === 'error').map((f) => f.data.detail)).toEqual([
      expect.stringContaining('Cannot watch Contact 999999'), expect.stringContaining('Cannot watch NoSuchModel 1'),
    ]);
    expect(app.realtime.watchersOf(t.name, 'Contact', 999_999).size).toBe(0);

    // No read right on Contact: refused, not registered.
    const refused = await open(outsider.token);
    refused.send({ type: 'watch', data: { model: 'Contact', id: contact } });
    await refused.next((f) => f.type === 'error');
    expect(app.realtime.watchersOf(t.name, 'Contact', contact).size).toBe(1);

    socket.send({ type: 'unwatch', data: { model: 'Contact', id: contact } });
    await socket.until(() => app.realtime.watchersOf(t.name, 'Contact', contact).size === 0, 3_000, 'unwatch');
    socket.send({ type: 'watch', data: { model: 'Contact', id: contact } });
    await socket.until(() => app.realtime.hasWatchers(t.name), 3_000, 'watch again');
    await socket.close();
    await socket.until(() => !app.realtime.hasWatchers(t.name), 3_000, 'forgotten on disconnect');
    await refused.close();
  });
});

describe('sending from module code', () => {
  it('delivers notification, activity_update and a client action from a model method, after commit', async () => {
    const p = await person('Recipient', PEOPLE);
    const mine = await open(p.token);
    const second = await open(p.token); // another tab
    const bystander = await open(t.apiKey);
    const res = await api('POST', '/api/execute/RealtimeProbe/push', t.apiKey, { request_body: { inputs: { user_id: p.uid, tag: 'first' } } });
    expect(res.statusCode, res.body).toBe(200);
    for (const s of [mine, second]) {
      expect(await s.next((f) => f.type === 'notification')).toEqual({ type: 'notification', data: { title: 'Probe', message: 'first', icon: 'bell' } });
      expect(await s.next((f) => f.type === 'activity_update')).toEqual({ type: 'activity_update', data: { kind: 'message', body: 'first' } });
      expect(await s.next((f) => f.data.event === 'client_action')).toEqual({
        type: 'realtime_data', data: { event: 'client_action', action: { type: 'reload', tag: 'first' } },
      });
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(bystander.frames).toHaveLength(1); // hello only

    // Queued until the commit: nothing while the method still runs.
    const pending = api('POST', '/api/execute/RealtimeProbe/push_then_wait', t.apiKey, { request_body: { inputs: { user_id: p.uid, tag: 'later' } } });
    await new Promise((r) => setTimeout(r, 400));
    expect(mine.frames.some((f) => f.data.message === 'later')).toBe(false);
    expect((await pending).statusCode).toBe(200);
    await mine.next((f) => f.data.message === 'later');
    await Promise.all([mine.close(), second.close(), bystander.close()]);
  });

  it('sends nothing when the transaction rolls back', async () => {
    const p = await person('Rollback', PEOPLE);
    const socket = await open(p.token);
    const res = await api('POST', '/api/execute/RealtimeProbe/push_then_fail', t.apiKey, { request_body: { inputs: { user_id: p.uid, tag: 'never' } } });
    expect(res.statusCode).toBe(400);
    await api('POST', '/api/execute/RealtimeProbe/push', t.apiKey, { request_body: { inputs: { user_id: p.uid, tag: 'marker' } } });
    await socket.next((f) => f.data.message === 'marker');
    expect(socket.frames.some((f) => f.data.message === 'never')).toBe(false);
    const written = await api('POST', '/api/query/RealtimeProbe', t.apiKey, { filter_str: "Q(name='never')" });
    expect(written.json()).toEqual([]);
    await socket.close();
  });

  it('sends at once outside a transaction and refuses a user id that is not one', async () => {
    const p = await person('Outside', PEOPLE);
    const socket = await open(p.token);
    const { send_realtime } = await import('fieldforge');
    const { runInEnv } = await import('../../src/orm/env.js');
    const { makeEnv } = await import('../../src/orm/transaction.js');
    const db = await t.platform.database(t.name);
    const registry = await t.platform.registry(t.name);
    await runInEnv(makeEnv(db, registry, db.executor, { bus: t.platform.bus }), async () => {
      send_realtime(p.uid, 'client_action', { action: 'now' });
      expect(() => send_realtime(0, 'x', {})).toThrow(TypeError);
    });
    expect((await socket.next((f) => f.data.event === 'client_action')).data).toEqual({ event: 'client_action', action: 'now' });
    await socket.close();
  });
});

describe('import progress', () => {
  it('pushes import_progress frames to the importing user while the import runs, every 1,000 records and at the end', async () => {
    const socket = await open(t.apiKey);
    const admin = socket.frames[0]!.data.user_id as number;
    const data = [['Name'], ...Array.from({ length: 2_500 }, (_, i) => [`Imported ${i}`])]; // a header row, then records
    const res = await api('POST', '/api/import/Contact', t.apiKey, { fields: ['name'], data, progress_id: 'socket-progress' });
    const answeredAt = Date.now();
    expect(res.statusCode, res.body).toBe(200);
    await socket.until(() => socket.events('import_progress').some((e) => e.done === 2_500), 5_000, 'the last progress frame');
    const frames = socket.events('import_progress');
    expect(frames.map((e) => e.done)).toEqual([0, 1_000, 2_000, 2_500]);
    for (const e of frames) expect(e).toEqual({ event: 'import_progress', progress_id: 'socket-progress', model: 'Contact', done: e.done, total: 2_500 });
    expect(admin).toBeGreaterThan(0);
    // Sent while the import ran, not after its commit: the first thousand arrived before the answer.
    const first = socket.frames.findIndex((f) => f.data.event === 'import_progress' && f.data.done === 1_000);
    expect(socket.arrivedAt[first]!).toBeLessThan(answeredAt);
    // The poll still answers.
    const poll = await api('GET', '/api/import-progress/socket-progress', t.apiKey);
    expect(poll.json()).toEqual({ done: 2_500, total: 2_500 });
    await socket.close();
  });
});

describe('presence', () => {
  it('pushes transitions to the other online people, counts several sockets as one, and answers GET /api/chat/presence', async () => {
    const a = await person('Presence A', PEOPLE);
    const b = await person('Presence B', PEOPLE);
    const sa = await open(a.token);
    const program = await open(t.apiKey); // an API key is not a person: no presence, no presence frames
    const sb1 = await open(b.token);
    expect(await sa.next((f) => f.data.event === 'presence')).toEqual({ type: 'realtime_data', data: { event: 'presence', user_id: b.uid, online: true } });
    const sb2 = await open(b.token);
    const online = await api('GET', '/api/chat/presence', a.token);
    expect(online.statusCode).toBe(200);
    expect(online.json()).toEqual(expect.arrayContaining([a.uid, b.uid]));
    expect(online.json()).not.toContain(program.frames[0]!.data.user_id);
    await sb1.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(sa.events('presence')).toHaveLength(1); // B still has a tab open
    await sb2.close();
    await sa.until(() => sa.events('presence').length === 2, 3_000, 'offline');
    expect(sa.events('presence')[1]).toEqual({ event: 'presence', user_id: b.uid, online: false });
    expect(sb1.events('presence')).toEqual([]); // never told about themselves
    expect(program.events('presence')).toEqual([]);
    expect((await api('GET', '/api/chat/presence', a.token)).json()).not.toContain(b.uid);
    await Promise.all([sa.close(), program.close()]);
  });

  it('lapses without heartbeats and comes back with the next one', async () => {
    // A second hub on the same platform and bus, with a short lifetime: a second worker, in-process.
    const quick = await buildApp(t.platform, { realtime: { presenceTtlMs: 1_200, checkIntervalMs: 200 } });
    await quick.listen({ port: 0, host: '127.0.0.1' });
    const quickBase = `ws://127.0.0.1:${(quick.server.address() as { port: number }).port}`;
    try {
      const a = await person('Lapse A', PEOPLE);
      const b = await person('Lapse B', PEOPLE);
      const sa = await open(a.token); // on the ordinary hub (35 s lifetime)
      const sb = await TestSocket.open(`${quickBase}/api/ws?db=${t.name}`, { authorization: `Bearer ${b.token}` });
      await sa.next((f) => f.data.event === 'presence' && f.data.user_id === b.uid && f.data.online === true);
      // B sends no heartbeat: offline after its lifetime, though its socket is open.
      await sa.until(() => sa.events('presence').some((e) => e.user_id === b.uid && e.online === false), 4_000, 'lapse');
      expect(sb.closed).toBeNull();
      sb.send({ type: 'heartbeat' });
      await sa.until(() => sa.events('presence').filter((e) => e.user_id === b.uid && e.online).length === 2, 3_000, 'back online');
      // Heartbeats keep it online past the lifetime.
      const timer = setInterval(() => sb.send({ type: 'heartbeat' }), 300);
      await new Promise((r) => setTimeout(r, 2_000));
      clearInterval(timer);
      expect(sa.events('presence').filter((e) => e.user_id === b.uid)).toHaveLength(3);
      await Promise.all([sa.close(), sb.close()]);
    } finally {
      await quick.close();
    }
  });
});

describe('databases', () => {
  it('never delivers a frame of one database to a socket of another, even to the same user id', async () => {
    const here = await open(t.apiKey);
    // The other database is a clone of the same template: the same key, the same user ids.
    const there = await open(t.apiKey, other);
    expect(there.frames[0]!.data).toEqual({ event: 'hello', user_id: here.frames[0]!.data.user_id, db: other });
    const res = await api('POST', '/api/execute/RealtimeProbe/push', t.apiKey, { request_body: { inputs: { user_id: here.frames[0]!.data.user_id, tag: 'only here' } } });
    expect(res.statusCode, res.body).toBe(200);
    await here.next((f) => f.type === 'notification');
    await new Promise((r) => setTimeout(r, 300));
    expect(there.frames).toHaveLength(1);
    await Promise.all([here.close(), there.close()]);
  });
});
