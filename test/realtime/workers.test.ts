/**
 * `fieldforge serve --workers 2` (CONTRACTS C4 "Scale"): two real worker processes forked on one
 * port, PostgreSQL and a Redis server of the test's own. Each worker serves sockets (the upgrade
 * answer names its worker in `X-FF-Worker`); a user with a socket on each worker receives every
 * frame type whichever worker handled the request that sent it — so each frame crossed from one
 * worker to the other for one of the two sockets. So do the live chat's: a visitor with a socket on
 * each worker gets every public message and agents on both get its events, whichever worker took
 * the post. Without DATABASE_URL or REDIS_URL the command
 * exits with code 2 and names what is missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { LiveChatSession } from '../../modules/livechat/models/livechat_session.js';
import { openSession } from '../../src/auth/sessions.js';
import { runCli } from '../support/cli.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { REALTIME_PROBE } from '../support/realtime-probe.js';
import { freePort, TestRedis } from '../support/redis-server.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { TestSocket } from '../support/socket-client.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { waitForChild } from '../support/child-output.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = randomBytes(32).toString('base64url');

let t: TestDatabase;
let redis: TestRedis;
let probeRoot: string;
let dataDir: string;
let child: ChildProcess | undefined;
let output = '';
let port: number;

const waitFor = (what: () => boolean, label: string, ms?: number) => waitForChild(() => child, () => output, what, label, ms);

async function person(name: string): Promise<{ uid: number; token: string }> {
  return t.run(async () => {
    const groups = await Group.query({ identifier__in: ['core.group_user', 'contacts.group_contacts_user'] }).ids();
    const user = await User.create({ name, email: `${name.toLowerCase().replace(/\W/g, '')}@example.test`, password: 'two-workers-pass-42', groups });
    const tokens = await openSession(user.id, { dbName: t.name, secret: SECRET, sessionHours: 8 });
    return { uid: user.id, token: tokens.access_token };
  });
}

const wsUrl = () => `ws://127.0.0.1:${port}/api/ws?db=${t.name}`;

/** Sockets with this credential until two sit on different workers (connections are spread round-robin). */
async function onBothWorkers(token: string): Promise<[TestSocket, TestSocket]> {
  const opened: TestSocket[] = [];
  for (let i = 0; i < 12; i++) {
    const s = await TestSocket.open(wsUrl(), { authorization: `Bearer ${token}` });
    const other = opened.find((o) => o.worker !== s.worker);
    if (other) {
      for (const o of opened) if (o !== other) await o.close();
      return [other, s];
    }
    opened.push(s);
  }
  throw new Error(`all sockets landed on one worker: ${opened.map((s) => s.worker).join(', ')}`);
}

function post(url: string, body: unknown, token = t.apiKey): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${url}`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'x-db-name': t.name, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  redis = await TestRedis.start();
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-workers-probe-'));
  dataDir = await mkdtemp(join(tmpdir(), 'ff-workers-data-'));
  await writeProbeModule(probeRoot, 'realtime_probe', { 'models/index.ts': REALTIME_PROBE, 'security/access.yaml': adminAccessYaml(['RealtimeProbe']) });
  t = await testDatabase('livechat', [probeRoot]);
  await t.platform.install(t.name, { init: ['realtime_probe'] });
  port = await freePort();
  const { FF_DEV: _dev, ...inherited } = process.env;
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--workers', '2', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT,
    detached: true, // its own process group: the test stops the primary and both workers, nothing else
    env: {
      ...inherited, DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: redis.url, FF_REDIS_PREFIX: 'ffworkers:', FF_ADDONS_PATH: probeRoot,
      FF_DATA_DIR: dataDir, FF_SECRET: SECRET, FF_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await waitFor(() => (output.match(/serving on http:\/\//g) ?? []).length >= 2, 'two "serving" lines');
});
afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    process.kill(-child.pid, 'SIGKILL');
    await exited;
  }
  await t?.close();
  await redis?.stop();
  for (const dir of [probeRoot, dataDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('serve --workers 2', () => {
  it('serves sockets on both workers and carries every frame type across them', async () => {
    const a = await person('Worker person A');
    const [a1, a2] = await onBothWorkers(a.token);
    expect(a1.worker).not.toBe(a2.worker);
    const [k1, k2] = await onBothWorkers(t.apiKey);

    // notification, activity_update, client action (send_realtime), from a model method.
    const res = await post('/api/execute/RealtimeProbe/push', { request_body: { inputs: { user_id: a.uid, tag: 'two workers' } } });
    expect(res.status, await res.text()).toBe(200);
    for (const s of [a1, a2]) {
      expect((await s.next((f) => f.type === 'notification')).data).toEqual({ title: 'Probe', message: 'two workers', icon: 'bell' });
      expect((await s.next((f) => f.type === 'activity_update')).data).toEqual({ kind: 'message', body: 'two workers' });
      expect((await s.next((f) => f.data.event === 'client_action')).data).toEqual({ event: 'client_action', action: { type: 'reload', tag: 'two workers' } });
    }

    // import_progress, to the importing principal's sockets.
    const imported = await post('/api/import/Contact', { fields: ['name'], data: [['Name'], ['W one'], ['W two'], ['W three']], progress_id: 'workers' });
    expect(imported.status, await imported.text()).toBe(200);
    for (const s of [k1, k2]) {
      await s.until(() => s.events('import_progress').some((e) => e.done === 3), 5_000, 'import progress');
      expect(s.events('import_progress').at(-1)).toEqual({ event: 'import_progress', progress_id: 'workers', model: 'Contact', done: 3, total: 3 });
    }

    // presence: B comes and goes on one worker; A hears it on both.
    const b = await person('Worker person B');
    const sb = await TestSocket.open(wsUrl(), { authorization: `Bearer ${b.token}` });
    for (const s of [a1, a2]) await s.next((f) => f.data.event === 'presence' && f.data.user_id === b.uid && f.data.online === true);
    const online = await fetch(`http://127.0.0.1:${port}/api/chat/presence`, { headers: { authorization: `Bearer ${a.token}`, 'x-db-name': t.name } });
    expect(await online.json()).toEqual([a.uid, b.uid].sort((x, y) => x - y));
    await sb.close();
    for (const s of [a1, a2]) await s.next((f) => f.data.event === 'presence' && f.data.user_id === b.uid && f.data.online === false);
    await Promise.all([a1, a2, k1, k2].map((s) => s.close()));
  });
});

describe('messages across workers (CONTRACTS C5)', () => {
  it('a message reaches its followers on both workers as `message`, and a viewer who does not follow it as `record_message`', async () => {
    const people = await Promise.all(['Worker follower', 'Worker viewer'].map((name) => t.run(async () => {
      const groups = await Group.query({ identifier__in: ['core.group_user', 'project.group_project_user'] }).ids();
      const user = await User.create({ name, email: `${name.toLowerCase().replace(/\W/g, '')}@example.test`, groups });
      const contact = (await Contact.query({ user: user.id }).first())!.id;
      return { uid: user.id, contact, token: (await openSession(user.id, { dbName: t.name, secret: SECRET, sessionHours: 8 })).access_token };
    })));
    const [follower, viewer] = people as [typeof people[0], typeof people[0]];
    const created = await post('/api/create/ProjectTask', { name: 'Across workers', assignee: follower.contact });
    expect(created.status).toBe(200);
    const id = ((await created.json()) as { id: number }).id;
    const [f1, f2] = await onBothWorkers(follower.token);
    const [v1, v2] = await onBothWorkers(viewer.token);
    for (const v of [v1, v2]) v.send({ type: 'watch', data: { model: 'ProjectTask', id } });
    await new Promise((r) => setTimeout(r, 300));
    const posted = await post('/api/execute/ProjectTask/message_post', { ids: [id], request_body: { inputs: { content: 'Across both' } } });
    expect(posted.status, await posted.clone().text()).toBe(200);
    const messageId = ((await posted.json()) as { result: { id: number } }).result.id;
    for (const s of [f1, f2]) {
      expect((await s.next((f) => f.type === 'activity_update' && f.data.kind === 'message')).data)
        .toMatchObject({ kind: 'message', model: 'ProjectTask', document: id, message_id: messageId, body: 'Across both' });
    }
    for (const s of [v1, v2]) {
      expect((await s.next((f) => f.type === 'activity_update' && f.data.kind === 'record_message')).data)
        .toMatchObject({ kind: 'record_message', document: id, message_id: messageId });
    }
    await Promise.all([f1, f2, v1, v2].map((s) => s.close()));
  });
});

describe('serve --workers N without the services it needs', () => {
  it('exits with code 2 and names what is missing', async () => {
    const both = await runCli(['serve', '--workers', '2', '--port', '1'], { DATABASE_URL: '', REDIS_URL: '' });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--workers 2 needs DATABASE_URL and REDIS_URL');
    const redisOnly = await runCli(['serve', '--workers', '3', '--port', '1'], { REDIS_URL: '' });
    expect(redisOnly.code).toBe(2);
    expect(redisOnly.stderr).toContain('--workers 3 needs REDIS_URL');
    expect(redisOnly.stderr).not.toContain('DATABASE_URL');
  });
});

describe('the live chat across workers (issue 28 item 3)', () => {
  it('brings every public message to the visitor’s sockets on both workers, and its events to agents on both', async () => {
    const agent = await t.run(async () => {
      const groups = await Group.query({ identifier__in: ['core.group_user', 'livechat.group_agent'] }).ids();
      const user = await User.create({ name: 'Worker agent', email: 'worker.agent@example.test', groups });
      return { uid: user.id, token: (await openSession(user.id, { dbName: t.name, secret: SECRET, sessionHours: 8 })).access_token };
    });
    // Started in-process (the ALTCHA has tests of its own): no agent online yet, so every agent follows.
    const { session_id, token } = await t.run(() => LiveChatSession.visitor_start('Wes Workers', null));
    const [g1, g2] = await onBothWorkers(agent.token);
    const visitorUrl = (after?: number) => `ws://127.0.0.1:${port}/livechat/ws?token=${token}&db=${t.name}${after ? `&after_id=${after}` : ''}`;
    const visitors: TestSocket[] = [];
    for (let i = 0; i < 12 && new Set(visitors.map((v) => v.worker)).size < 2; i++) {
      visitors.push(await TestSocket.open(visitorUrl(), {}, (f) => f.type === 'history'));
    }
    const v1 = visitors[0]!;
    const v2 = visitors.find((v) => v.worker !== v1.worker)!;
    expect(v2, `all visitor sockets on ${v1.worker}`).toBeDefined();
    for (const v of visitors) if (v !== v1 && v !== v2) await v.close();
    for (const g of [g1, g2]) await g.next((f) => f.data.event === 'livechat_presence' && f.data.session_id === session_id && f.data.online === true);

    const sent = await fetch(`http://127.0.0.1:${port}/livechat/message?db=${t.name}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, content: 'Hello from one worker' }),
    });
    expect(sent.status, await sent.clone().text()).toBe(200);
    const { id: first } = (await sent.json()) as { id: number };
    for (const v of [v1, v2]) expect((await v.next((f) => f.type === 'message' && f.message.id === first)).message).toMatchObject({ is_agent: false, author_name: 'Wes Workers' });
    for (const g of [g1, g2]) expect((await g.next((f) => f.data.event === 'livechat_message')).data).toMatchObject({ session_id, message: { id: first, is_agent: false } });

    const replied = await post('/api/execute/LiveChatSession/message_post', { ids: [session_id], request_body: { inputs: { content: 'Answer across' } } }, agent.token);
    expect(replied.status, await replied.clone().text()).toBe(200);
    for (const v of [v1, v2]) expect((await v.next((f) => f.type === 'message' && f.message.is_agent)).message.content).toContain('Answer across');

    v1.send({ type: 'typing' });
    for (const g of [g1, g2]) expect((await g.next((f) => f.data.event === 'livechat_typing')).data).toEqual({ event: 'livechat_typing', session_id, visitor_name: 'Wes Workers' });

    // A reconnect, on whichever worker, with the last id it had: exactly what came after.
    const again = await TestSocket.open(visitorUrl(first), {}, (f) => f.type === 'history');
    expect(again.frames[0]!.messages.map((m: { content: string }) => m.content)).toEqual([expect.stringContaining('Answer across')]);

    // Presence: the session stays online while any of its sockets, on any worker, is open.
    await Promise.all([v1.close(), again.close()]);
    await new Promise((r) => setTimeout(r, 300));
    expect(g1.events('livechat_presence').filter((e) => e.online === false)).toEqual([]);
    await v2.close();
    for (const g of [g1, g2]) await g.next((f) => f.data.event === 'livechat_presence' && f.data.online === false);
    await Promise.all([g1.close(), g2.close()]);
  });
});
