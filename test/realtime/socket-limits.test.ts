/**
 * The socket limits of CONTRACTS C4 on one worker, over real WebSockets: a user (sessions and API
 * keys of its service account alike) and an API key hold at most so many open sockets; one more
 * gets an `error` frame `{detail, error: 'TooManySockets'}`, is closed with 4029, and is never
 * registered (no `hello`, no presence); closing one frees a place; other users never notice. A
 * socket watches at most `FF_WS_MAX_WATCHES` records (200 by default): one more watch is answered
 * with an `error` frame `{detail, error: 'TooManyWatches', model, id}` and the socket stays open.
 * The settings read the limits from the environment.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { openSession } from '../../src/auth/sessions.js';
import { readSettings } from '../../src/config/settings.js';
import { buildApp } from '../../src/http/app.js';
import { TestSocket, type Frame } from '../support/socket-client.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let app: FastifyInstance;
let base: string;
const PEOPLE = ['core.group_user', 'contacts.group_contacts_user'];
const PER_USER = 3;
const PER_KEY = 2;

async function person(name: string): Promise<{ uid: number; token: string }> {
  return t.run(async () => {
    const groups = await Group.query({ identifier__in: PEOPLE }).ids();
    const user = await User.create({ name, email: `${name.toLowerCase().replace(/\W/g, '')}@example.test`, password: 'socket-limits-pass-42', groups });
    const tokens = await openSession(user.id, { dbName: t.name, secret: t.platform.secret, sessionHours: 8 });
    return { uid: user.id, token: tokens.access_token };
  });
}

const url = () => `${base}/api/ws?db=${t.name}`;
const open = (token: string) => TestSocket.open(url(), { authorization: `Bearer ${token}` });

/** A socket the server accepts and then closes before `hello`: the frames it got, and its close code. */
async function refused(token: string): Promise<{ frames: Frame[]; code: number }> {
  const answer = await TestSocket.attempt(url(), { authorization: `Bearer ${token}` });
  if (answer instanceof TestSocket) {
    await answer.close();
    throw new Error('the socket was accepted');
  }
  return answer;
}

/** Opens a socket once a place is free (the server frees it once it has seen the close). */
async function openWhenFree(token: string): Promise<TestSocket> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const answer = await TestSocket.attempt(url(), { authorization: `Bearer ${token}` });
    if (answer instanceof TestSocket) return answer;
    if (Date.now() > deadline) throw new Error(`no place freed within 3 s: ${JSON.stringify(answer)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function expectTooManySockets(answer: { frames: Frame[]; code: number }, limit: 'user' | 'key'): void {
  expect(answer.code).toBe(4029);
  expect(answer.frames).toEqual([{ type: 'error', data: { detail: expect.stringContaining(limit === 'user' ? 'FF_WS_MAX_SOCKETS_PER_USER' : 'FF_WS_MAX_SOCKETS_PER_KEY'), error: 'TooManySockets' } }]);
}

beforeAll(async () => {
  t = await testDatabase('full');
  // A high frame rate: 200 watches are sent at once (the flood bound has tests of its own).
  app = await buildApp(t.platform, { realtime: { maxSocketsPerUser: PER_USER, maxSocketsPerKey: PER_KEY, checkIntervalMs: 300, framesPerSecond: 1_000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

describe('open sockets per user', () => {
  it('closes one more socket of a user with an error frame and 4029 before hello; closing one frees a place; another user is unaffected', async () => {
    const a = await person('Limit A');
    const b = await person('Limit B');
    const watcher = await open(b.token); // hears every presence transition of A
    const sockets = [];
    for (let i = 0; i < PER_USER; i++) sockets.push(await open(a.token));
    await watcher.next((f) => f.data.event === 'presence' && f.data.user_id === a.uid && f.data.online === true);
    const size = app.realtime.size;

    const over = await refused(a.token);
    expectTooManySockets(over, 'user'); // the error frame alone: no hello
    expect(app.realtime.size).toBe(size);
    // Refused again and again, it never took a place.
    for (let i = 0; i < 3; i++) expectTooManySockets(await refused(a.token), 'user');
    for (const s of sockets) expect(s.closed).toBeNull();

    // Another user is unaffected: B opens more sockets beside its first.
    const bMore = [await open(b.token), await open(b.token)];
    expect(bMore.every((s) => s.closed === null)).toBe(true);

    // A closes one: the next socket of A is accepted.
    await sockets.pop()!.close();
    sockets.push(await openWhenFree(a.token));
    expectTooManySockets(await refused(a.token), 'user');

    // A refused socket was never online: A's presence changed only when its last socket closed.
    await Promise.all(sockets.map((s) => s.close()));
    await watcher.next((f) => f.data.event === 'presence' && f.data.user_id === a.uid && f.data.online === false);
    expect(watcher.events('presence').filter((e) => e.user_id === a.uid).map((e) => e.online)).toEqual([true, false]);
    // All closed: all places free.
    const again = [];
    for (let i = 0; i < PER_USER; i++) again.push(await openWhenFree(a.token));
    await Promise.all([...again, watcher, ...bMore].map((s) => s.close()));
  });

  it('counts an API key’s sockets for the key and for its service account’s user', async () => {
    const first = await t.run(() => createServiceAccountKey({ name: 'limited program', groups: ['core.group_user'] }));
    const second = await t.run(() => createServiceAccountKey({ name: 'limited program (rotated)', serviceAccountId: first.serviceAccountId }));
    const k1 = [await open(first.key), await open(first.key)];
    expect(k1[0]!.frames[0]!.data.user_id).toBe(k1[1]!.frames[0]!.data.user_id);
    // The key is full (2), its user is not (2 of 3).
    expectTooManySockets(await refused(first.key), 'key');
    const k2 = await open(second.key);
    // Now the user is full (3): the other key, with room of its own, is refused by the user limit.
    expectTooManySockets(await refused(second.key), 'user');
    // The template's key belongs to another account: unaffected.
    const other = await open(t.apiKey);
    await k1[0]!.close();
    const k2More = await openWhenFree(second.key); // a place of the user, freed by the first key
    expectTooManySockets(await refused(first.key), 'user');
    await Promise.all([k1[1]!, k2, k2More, other].map((s) => s.close()));
  });
});

describe('watches per socket', () => {
  it('answers a watch over FF_WS_MAX_WATCHES (200) with an error frame and keeps the socket open', async () => {
    const ids = await t.run(async () => (await Contact.create_many(Array.from({ length: 202 }, (_, i) => ({ name: `Watched ${i}` })))).map((c) => c.id));
    const socket = await open(t.apiKey);
    for (const id of ids.slice(0, 200)) socket.send({ type: 'watch', data: { model: 'Contact', id } });
    await socket.until(() => ids.slice(0, 200).every((id) => app.realtime.watchersOf(t.name, 'Contact', id).size === 1), 10_000, '200 watches');
    socket.send({ type: 'watch', data: { model: 'Contact', id: ids[200] } });
    const error = await socket.next((f) => f.type === 'error');
    expect(error.data).toEqual({ detail: expect.stringContaining('FF_WS_MAX_WATCHES'), error: 'TooManyWatches', model: 'Contact', id: ids[200] });
    expect(error.data.detail).toContain('at most 200 records');
    expect(app.realtime.watchersOf(t.name, 'Contact', ids[200]!).size).toBe(0);
    // Watching one it watches already is no new watch; after an unwatch there is room again.
    socket.send({ type: 'watch', data: { model: 'Contact', id: ids[0] } });
    socket.send({ type: 'unwatch', data: { model: 'Contact', id: ids[1] } });
    socket.send({ type: 'watch', data: { model: 'Contact', id: ids[201] } });
    await socket.until(() => app.realtime.watchersOf(t.name, 'Contact', ids[201]!).size === 1, 3_000, 'the watch after an unwatch');
    expect(socket.frames.filter((f) => f.type === 'error')).toHaveLength(1);
    expect(socket.closed).toBeNull();
    await socket.close();
  });
});

describe('settings', () => {
  it('reads the limits from FF_WS_MAX_SOCKETS_PER_USER, FF_WS_MAX_SOCKETS_PER_KEY and FF_WS_MAX_WATCHES', () => {
    expect(readSettings({}).socket).toMatchObject({ maxSocketsPerUser: 50, maxSocketsPerKey: 50, maxWatches: 200 });
    // A key may hold as many as its user unless told otherwise.
    expect(readSettings({ FF_WS_MAX_SOCKETS_PER_USER: '80' }).socket).toMatchObject({ maxSocketsPerUser: 80, maxSocketsPerKey: 80 });
    expect(readSettings({ FF_WS_MAX_SOCKETS_PER_USER: '80', FF_WS_MAX_SOCKETS_PER_KEY: '5', FF_WS_MAX_WATCHES: '30' }).socket)
      .toMatchObject({ maxSocketsPerUser: 80, maxSocketsPerKey: 5, maxWatches: 30 });
    for (const name of ['FF_WS_MAX_SOCKETS_PER_USER', 'FF_WS_MAX_SOCKETS_PER_KEY', 'FF_WS_MAX_WATCHES']) {
      expect(() => readSettings({ [name]: '0' })).toThrow(name);
    }
  });
});
