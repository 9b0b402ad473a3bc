/**
 * Record-changed pings (spec §6.3, CONTRACTS C4) on one worker with the in-process bus, over real
 * WebSockets: every update path pings every watcher of the record but the editing session's
 * sockets, naming only the fields whose value changed (no audit column, no field a recompute
 * cascade rewrote); a rolled-back write, ui-effect, a cascade and an unwatched record ping nobody;
 * an API-key write excludes no one; unwatching stops the pings; and with nobody watching the write
 * path costs not one statement more than without the feed.
 *
 * "No ping" is asserted with a marker: a write that does ping comes after the one that must not,
 * and the bus delivers in commit order, so when the marker's ping has arrived nothing else may have.
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
import { currentEnv } from '../../src/orm/env.js';
import { QuerySet } from '../../src/orm/queryset.js';
import { writeRecords } from '../../src/orm/write/write-records.js';
import { CHANGE_PROBE, CHANGE_PROBE_ACCESS } from '../support/change-probe.js';
import { writeProbeModule } from '../support/probe-module.js';
import { TestSocket, type Frame } from '../support/socket-client.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let app: FastifyInstance;
let probeRoot: string;
let base: string;
const PASSWORD = 'record-changed-pass-42';

interface Person {
  uid: number;
  name: string;
  /** Two sessions of the same user (two browsers). */
  tokens: [string, string];
}

async function person(name: string): Promise<Person> {
  return t.run(async () => {
    const groups = await Group.query({ identifier__in: ['core.group_user'] }).ids();
    const user = await User.create({ name, email: `${name.toLowerCase().replace(/\W/g, '')}@example.test`, password: PASSWORD, groups });
    const session = async () => (await openSession(user.id, { dbName: t.name, secret: t.platform.secret, sessionHours: 8 })).access_token;
    return { uid: user.id, name, tokens: [await session(), await session()] };
  });
}

function open(token: string): Promise<TestSocket> {
  return TestSocket.open(`${base}/api/ws?db=${t.name}`, { authorization: `Bearer ${token}` });
}

function api(method: 'POST' | 'PUT', url: string, body: unknown, token = t.apiKey) {
  return app.inject({
    method, url, payload: JSON.stringify(body),
    headers: { authorization: `Bearer ${token}`, 'x-db-name': t.name, 'content-type': 'application/json' },
  });
}

async function ok(res: Awaited<ReturnType<typeof api>>) {
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

async function watch(socket: TestSocket, id: number, model = 'ChangeProbe'): Promise<void> {
  const before = app.realtime.watchersOf(t.name, model, id).size;
  socket.send({ type: 'watch', data: { model, id } });
  await socket.until(() => app.realtime.watchersOf(t.name, model, id).size > before, 3_000, 'watch');
}

async function unwatch(socket: TestSocket, id: number, model = 'ChangeProbe'): Promise<void> {
  const before = app.realtime.watchersOf(t.name, model, id).size;
  socket.send({ type: 'unwatch', data: { model, id } });
  await socket.until(() => app.realtime.watchersOf(t.name, model, id).size < before, 3_000, 'unwatch');
}

function pings(socket: TestSocket, id?: number, model = 'ChangeProbe'): Record<string, any>[] {
  return socket.frames
    .filter((f: Frame) => f.type === 'activity_update' && f.data.kind === 'record_changed')
    .map((f) => f.data)
    .filter((d) => id === undefined || (d.id === id && d.model === model));
}

async function nextPing(socket: TestSocket, id: number, count = 1, model = 'ChangeProbe'): Promise<Record<string, any>> {
  await socket.until(() => pings(socket, id, model).length >= count, 5_000, `ping ${count} of ${model} ${id}`);
  return pings(socket, id, model)[count - 1]!;
}

async function probe(vals: Record<string, unknown> = {}): Promise<number> {
  const res = await ok(await api('POST', '/api/create/ChangeProbe', { name: 'Probe', qty: 1, price: 2, ...vals }));
  return res.id as number;
}

const update = (id: number, vals: Record<string, unknown>, token?: string) => api('PUT', `/api/update/ChangeProbe/${id}`, vals, token);

let ann: Person;
let bob: Person;
let marker: number;
/** Pings `marker` and waits for it on every socket given: after it, no other ping may still come. */
async function afterMarker(...sockets: TestSocket[]): Promise<void> {
  const counts = sockets.map((s) => pings(s, marker).length);
  await ok(await update(marker, { note: `m${Date.now()}${Math.random()}` }));
  await Promise.all(sockets.map((s, i) => nextPing(s, marker, counts[i]! + 1)));
}

beforeAll(async () => {
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-change-probe-'));
  await writeProbeModule(probeRoot, 'change_probe', { 'models/index.ts': CHANGE_PROBE, 'security/access.yaml': CHANGE_PROBE_ACCESS });
  t = await testDatabase('full', [probeRoot]);
  await t.platform.install(t.name, { init: ['change_probe'] });
  app = await buildApp(t.platform);
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  ann = await person('Ann Watcher');
  bob = await person('Bob Watcher');
  marker = await probe({ name: 'Marker' });
});
afterAll(async () => {
  await app?.close();
  await t?.close();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

describe('record_changed on every update path', () => {
  it('/api/update pings every watcher but the editing session, with only the changed fields and the editor', async () => {
    const id = await probe({ name: 'Same', qty: 1, price: 2 });
    const [annHere, annElsewhere, bobs, keys] = await Promise.all([open(ann.tokens[0]), open(ann.tokens[1]), open(bob.tokens[0]), open(t.apiKey)]);
    for (const s of [annHere, annElsewhere, bobs, keys]) await watch(s, id);
    await watch(annHere, marker);
    await watch(annElsewhere, marker);
    const before = Date.now();
    // `name` is written with its own value (no change); `total` is recomputed (a cascade).
    await ok(await update(id, { name: 'Same', qty: 5 }, ann.tokens[0]));
    for (const s of [annElsewhere, bobs, keys]) {
      const ping = await nextPing(s, id);
      expect(ping).toEqual({
        kind: 'record_changed', model: 'ChangeProbe', id, fields: ['qty'],
        updated_by: { id: ann.uid, display_name: 'Ann Watcher' }, updated_date: expect.any(String),
      });
      expect(Date.parse(ping.updated_date)).toBeGreaterThanOrEqual(before - 1_000);
    }
    await afterMarker(annHere, annElsewhere);
    expect(pings(annHere, id)).toEqual([]); // the editing session's own socket
    for (const s of [annHere, annElsewhere, bobs, keys]) await s.close();
  });

  it('a write with an API key excludes no one', async () => {
    const id = await probe();
    const sockets = await Promise.all([open(ann.tokens[0]), open(bob.tokens[0]), open(t.apiKey)]);
    for (const s of sockets) await watch(s, id);
    await ok(await update(id, { price: 7 }));
    for (const s of sockets) expect((await nextPing(s, id)).fields).toEqual(['price']);
    for (const s of sockets) await s.close();
  });

  it('bulk update (items and selection), queryset update, a method that assigns, a wizard, import updates and resequence', async () => {
    const [a, b, c] = [await probe({ sequence: 1 }), await probe({ sequence: 2 }), await probe({ sequence: 3 })];
    const socket = await open(bob.tokens[0]);
    for (const id of [a, b, c]) await watch(socket, id);

    await ok(await api('PUT', '/api/bulk-update/ChangeProbe', [{ id: a, note: 'bulk a' }, { id: b, qty: 9, note: null }]));
    expect((await nextPing(socket, a, 1)).fields).toEqual(['note']);
    expect((await nextPing(socket, b, 1)).fields).toEqual(['qty']); // note was null already

    await ok(await api('PUT', '/api/bulk-update/ChangeProbe', { selection: { ids: [a, c] }, vals: { name: 'Selected' } }));
    expect((await nextPing(socket, a, 2)).fields).toEqual(['name']);
    expect((await nextPing(socket, c, 1)).fields).toEqual(['name']);

    await ok(await api('POST', '/api/execute/ChangeProbe/bump_notes', { request_body: { inputs: { ids: [b, c], note: 'bumped' } } }));
    expect((await nextPing(socket, b, 2)).fields).toEqual(['note']);
    expect((await nextPing(socket, c, 2)).fields).toEqual(['note']);

    await ok(await api('POST', '/api/execute/ChangeProbe/rename', { ids: [a], request_body: { inputs: { name: 'Assigned' } } }));
    expect((await nextPing(socket, a, 3)).fields).toEqual(['name']);

    // A wizard run on a selection (its inputs checked against the wizard's fields first).
    await ok(await api('POST', '/api/execute/ChangeProbe/action_renote', { selection: { ids: [a, c] }, request_body: { inputs: { note: 'From the wizard' } } }));
    expect((await nextPing(socket, a, 4)).fields).toEqual(['note']);
    expect((await nextPing(socket, c, 3)).fields).toEqual(['note']);

    const imported = await ok(await api('POST', '/api/import/ChangeProbe', { fields: ['id', 'name'], data: [['id', 'name'], [b, 'Imported'], [999_999, 'Ghost']] }));
    expect(imported.summary.updated).toBe(1);
    expect((await nextPing(socket, b, 3)).fields).toEqual(['name']);

    // c moves first: every record's number changes, each is pinged with `sequence`.
    await ok(await api('POST', '/api/resequence/ChangeProbe', { dropped_column_id: c, after_column_id: null, scope_filter: `Q(id__in=[${a}, ${b}, ${c}])` }));
    expect((await nextPing(socket, c, 4)).fields).toEqual(['sequence']);
    expect((await nextPing(socket, a, 5)).fields).toEqual(['sequence']);
    expect((await nextPing(socket, b, 4)).fields).toEqual(['sequence']);
    await socket.close();
  });

  it('several writes to one record in one transaction are one ping with the union of the fields', async () => {
    const id = await probe({ qty: 1 });
    const socket = await open(bob.tokens[0]);
    await watch(socket, id);
    await watch(socket, marker);
    await ok(await api('POST', '/api/execute/ChangeProbe/write_twice', { ids: [id], request_body: { inputs: { name: 'Twice', qty: 2 } } }));
    expect((await nextPing(socket, id)).fields.sort()).toEqual(['name', 'qty']);
    await afterMarker(socket);
    expect(pings(socket, id)).toHaveLength(1);
    await socket.close();
  });

  it('a ManyToMany counts only when its set of links changes', async () => {
    const tags = await ok(await api('POST', '/api/bulk-create/ChangeProbeTag', [{ name: 'red' }, { name: 'blue' }]));
    const id = await probe();
    const socket = await open(bob.tokens[0]);
    await watch(socket, id);
    await ok(await update(id, { tags: [tags[0].id, tags[1].id] }));
    expect((await nextPing(socket, id, 1)).fields).toEqual(['tags']);
    await ok(await update(id, { tags: [tags[1].id, tags[0].id], note: 'n' }));
    expect((await nextPing(socket, id, 2)).fields).toEqual(['note']);
    await socket.close();
  });
});

describe('no record_changed', () => {
  it('for a rolled-back write, a ui-effect, a recompute cascade, an unchanged value or a record nobody watches', async () => {
    const id = await probe({ name: 'Kept' });
    const unwatched = await probe();
    const socket = await open(bob.tokens[0]);
    await watch(socket, id);
    await watch(socket, marker);
    const line = await ok(await api('POST', '/api/create/ChangeProbeLine', { probe: id, amount: 1 }));
    await afterMarker(socket);
    const pingsBefore = pings(socket, id).length;

    const failed = await api('POST', '/api/execute/ChangeProbe/rename_then_fail', { ids: [id], request_body: { inputs: { name: 'Rolled back' } } });
    expect(failed.statusCode).toBe(400);
    const effect = await api('POST', '/api/ui-effect/ChangeProbe', { id, vals: { qty: 40 }, field_name: 'qty' });
    expect(effect.statusCode, effect.body).toBe(200);
    // The line's amount changes the probe's stored lines_total: a cascade, not an edit of the probe.
    await ok(await api('PUT', `/api/update/ChangeProbeLine/${line.id}`, { amount: 5 }));
    await ok(await update(id, { name: 'Kept' }));
    await ok(await update(unwatched, { name: 'Nobody looks' }));
    await afterMarker(socket);
    expect(pings(socket, id)).toHaveLength(pingsBefore);
    expect(pings(socket, unwatched)).toEqual([]);
    const [stored] = await t.run(() => new QuerySet(currentEnv().registry.meta('ChangeProbe')).filter({ id }).read(['name', 'lines_total']));
    expect(stored).toMatchObject({ name: 'Kept', lines_total: 5 }); // the cascade did happen
    await socket.close();
  });

  it('once the record is unwatched, or its socket closed', async () => {
    const id = await probe();
    const socket = await open(bob.tokens[0]);
    const other = await open(bob.tokens[1]);
    await watch(socket, id);
    await watch(other, id);
    await watch(socket, marker);
    await ok(await update(id, { qty: 11 }));
    await nextPing(socket, id);
    await unwatch(socket, id);
    await other.close();
    await socket.until(() => app.realtime.watchersOf(t.name, 'ChangeProbe', id).size === 0, 3_000, 'forgotten');
    await ok(await update(id, { qty: 12 }));
    await afterMarker(socket);
    expect(pings(socket, id)).toHaveLength(1);
    await socket.close();
  });
});

describe('the per-database gate, one worker', () => {
  const write = (id: number, qty: number) => t.run(() => writeRecords(currentEnv().registry.meta('ChangeProbe'), [id], { qty }));

  it('costs no statement while nobody watches; a watched database reads the written columns once per write', async () => {
    const id = await probe();
    // Every socket of the tests above is closed: the gate went out with the last watch.
    for (let i = 0; i < 60 && app.realtime.hasWatchers(t.name); i++) await new Promise((r) => setTimeout(r, 50));
    expect(app.realtime.hasWatchers(t.name)).toBe(false);
    expect(t.platform.bus.watchGate.isLit(t.name)).toBe(false);
    const dark = await t.countStatements(() => write(id, 21));
    const withoutFeed = await t.countStatements(() => t.run(() => writeRecords(currentEnv().registry.meta('ChangeProbe'), [id], { qty: 22 }), { changeFeed: null }));
    expect(dark.count).toBe(withoutFeed.count);
    await t.platform.bus.watchGate.light(t.name, 60_000);
    const lit = await t.countStatements(() => write(id, 23));
    expect(lit.count).toBe(dark.count + 1);
    expect(lit.statements.filter((s) => /^\s*SELECT "id", "qty" AS/.test(s))).toHaveLength(1);
    t.platform.bus.watchGate.dim(t.name);
    console.log(`statements per write: ${dark.count} with nobody watching (${withoutFeed.count} without the feed), ${lit.count} with the gate lit`);
  });
});
