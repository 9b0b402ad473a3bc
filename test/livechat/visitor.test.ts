/**
 * The live chat's visitor side over real HTTP and WebSockets on one worker (issue 28 items 1–4,
 * CONTRACTS C5 "Live chat"): a session needs a solved ALTCHA; the visitor posts over HTTP and
 * receives over its socket the history, then every public message (its own echo, agents' replies;
 * never a note); a reconnect with `after_id` gets exactly what it missed; bad, closed and other
 * databases' tokens get 401; rate and size bounds answer 429 and 413; the routes answer any
 * origin. Agents: the online agent with the fewest open sessions is assigned and follows; with
 * none online every agent follows; agents see messages, typing and presence on their socket.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveChatSession } from '../../modules/livechat/models/livechat_session.js';
import { Message } from '../../modules/messaging/models/message.js';
import { buildApp } from '../../src/http/app.js';
import { solvedAltcha } from '../support/altcha.js';
import { messagingPerson, type MessagingPerson } from '../support/messaging-person.js';
import { TestSocket, type Frame } from '../support/socket-client.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let app: FastifyInstance;
let ws: string;
let http: string;
let agents: MessagingPerson[];

const AGENT_GROUPS = ['core.group_user', 'livechat.group_agent'];

beforeAll(async () => {
  t = await testDatabase('livechat');
  app = await buildApp(t.platform, { altchaMaxNumber: 20, livechat: { checkIntervalMs: 200, typingIntervalMs: 300, flushMs: 150 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  ws = `ws://127.0.0.1:${port}`;
  http = `http://127.0.0.1:${port}`;
  agents = await Promise.all(['Ada Agent', 'Bea Agent'].map((n) => messagingPerson(t, n, AGENT_GROUPS)));
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${http}${url}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-db-name': t.name, ...headers }, body: JSON.stringify(body) });

async function start(name = 'Vera Visitor', email?: string): Promise<{ session_id: number; token: string; agents_online: boolean }> {
  const res = await post('/livechat/session', { altcha: await solvedAltcha(app, t.name, '/livechat/altcha'), name, ...(email ? { email } : {}) });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json() as Promise<{ session_id: number; token: string; agents_online: boolean }>;
}

const visitorSocket = (token: string, afterId?: number) =>
  TestSocket.open(`${ws}/livechat/ws?token=${token}&db=${t.name}${afterId === undefined ? '' : `&after_id=${afterId}`}`, {}, (f) => f.type === 'history');
const agentSocket = (p: MessagingPerson) => TestSocket.open(`${ws}/api/ws?db=${t.name}`, { authorization: `Bearer ${p.token}` });
const messages = (s: TestSocket) => s.frames.filter((f: Frame) => f.type === 'message').map((f) => f.message);
const history = (s: TestSocket) => s.frames.find((f: Frame) => f.type === 'history')!;

async function reply(p: MessagingPerson, session: number, content: string, message_type = 'comment') {
  const res = await app.inject({
    method: 'POST', url: '/api/execute/LiveChatSession/message_post',
    headers: { authorization: `Bearer ${p.token}`, 'x-db-name': t.name, 'content-type': 'application/json' },
    payload: { ids: [session], request_body: { inputs: { content, message_type } } },
  });
  return res;
}

describe('starting a session', () => {
  it('needs a solved ALTCHA, and stores the token hashed', async () => {
    const refused = await post('/livechat/session', { name: 'Bot' });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ detail: 'Human verification failed.' });
    const forged = await post('/livechat/session', { altcha: Buffer.from('{"challenge":{}}').toString('base64') });
    expect(forged.status).toBe(400);
    const started = await start('Sam', 'sam@example.com');
    expect(started.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await t.run(() => LiveChatSession.query({ id: started.session_id }).read(['visitor_name', 'visitor_email', 'state', 'token_hash']));
    expect(stored[0]).toMatchObject({ visitor_name: 'Sam', visitor_email: 'sam@example.com', state: 'open' });
    expect(stored[0]!.token_hash).not.toContain(started.token);
    expect(String(stored[0]!.token_hash)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a bad e-mail and a name too long, writing nothing', async () => {
    const before = await t.run(() => LiveChatSession.query({}).count());
    const bad = await post('/livechat/session', { altcha: await solvedAltcha(app, t.name, '/livechat/altcha'), email: 'not-an-email' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'ValidationError' });
    expect(await t.run(() => LiveChatSession.query({}).count())).toBe(before);
  });

  it('answers any origin on the live-chat routes only, without credentials', async () => {
    const preflight = await fetch(`${http}/livechat/message`, { method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/content-type/i);
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    const api = await fetch(`${http}/api/chat/presence`, { headers: { origin: 'https://shop.example' } });
    expect(api.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('the visitor socket', () => {
  it('sends the history, then the echo and agent replies, never a note; a reconnect gets exactly what it missed', async () => {
    const { session_id, token } = await start('Rita');
    const first = await post('/livechat/message', { token, content: 'Hello <b>there</b>\nsecond line' });
    expect(first.status).toBe(200);
    const { id: firstId } = await first.json() as { id: number };
    const socket = await visitorSocket(token);
    expect(history(socket).messages).toEqual([expect.objectContaining({ id: firstId, author_name: 'Rita', is_agent: false, content: '<p>Hello &lt;b&gt;there&lt;/b&gt;<br />second line</p>', attachments: [] })]);
    expect(history(socket).state).toBe('open');

    const [ada] = agents;
    const sent = await reply(ada!, session_id, '<p>How can I help?</p>');
    expect(sent.statusCode, sent.body).toBe(200);
    const note = await reply(ada!, session_id, '<p>internal: VIP</p>', 'note');
    expect(note.statusCode).toBe(200);
    await post('/livechat/message', { token, content: 'My order is late' });
    await socket.until(() => messages(socket).length === 2, 5_000, 'two messages');
    expect(messages(socket).map((m) => [m.content, m.is_agent, m.author_name])).toEqual([
      ['<p>How can I help?</p>', true, 'Ada Agent'],
      ['<p>My order is late</p>', false, 'Rita'],
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect(JSON.stringify(socket.frames)).not.toContain('VIP');
    const seenId = messages(socket)[0]!.id as number;
    await socket.close();

    // Offline meanwhile: an agent replies twice; the widget reconnects with the last id it has.
    await reply(ada!, session_id, '<p>Checking…</p>');
    await reply(ada!, session_id, '<p>It ships today.</p>');
    const again = await visitorSocket(token, seenId);
    expect(history(again).messages.map((m: { content: string }) => m.content)).toEqual(['<p>My order is late</p>', '<p>Checking…</p>', '<p>It ships today.</p>']);
    await again.close();
  });

  it('writes the presence of a crowd connecting and leaving at once in a few statements, and every session is online, then offline', async () => {
    const crowd = await Promise.all(Array.from({ length: 30 }, (_, i) => t.run(() => LiveChatSession.visitor_start(`Crowd ${i}`, null))));
    const database = await t.platform.database(t.name);
    const presenceWrites: string[] = [];
    const off = database.onStatement((text) => {
      if (/^\s*UPDATE\b[\s\S]*visitor_online/i.test(text)) presenceWrites.push(text);
    });
    try {
      const sockets = await Promise.all(crowd.map((c) => visitorSocket(c.token)));
      const ids = crowd.map((c) => c.session_id);
      const online = () => t.run(() => LiveChatSession.query({ id__in: ids, visitor_online: true }).count());
      await expect.poll(online, { timeout: 5_000 }).toBe(30);
      // 30 sessions came online: a unit of work per window (150 ms here), not one per visitor (a loaded machine spreads the connects over a few windows).
      expect(presenceWrites.length).toBeGreaterThan(0);
      expect(presenceWrites.length).toBeLessThanOrEqual(10);
      presenceWrites.length = 0;
      await Promise.all(sockets.map((s) => s.close()));
      await expect.poll(online, { timeout: 5_000 }).toBe(0);
      expect(presenceWrites.length).toBeLessThanOrEqual(10);
    } finally {
      off();
    }
  });

  it('holds at most ten sockets of one session on a worker: the next is closed with 1008', async () => {
    const { token } = await start('Tabby Tabs');
    const tabs = await Promise.all(Array.from({ length: 10 }, () => visitorSocket(token)));
    const eleventh = await TestSocket.attempt(`${ws}/livechat/ws?token=${token}&db=${t.name}`);
    expect(eleventh).toMatchObject({ code: 1008, frames: [] });
    await tabs[0]!.close();
    const again = await visitorSocket(token);
    expect(history(again).state).toBe('open');
    await Promise.all([again, ...tabs.slice(1)].map((s) => s.close()));
  });

  it('refuses a bad token, another database\'s token and a closed session with 401', async () => {
    const refusal = (token: string, db = t.name) => TestSocket.refusal(`${ws}/livechat/ws?token=${token}&db=${db}`);
    expect((await refusal('x'.repeat(43))).status).toBe(401);
    expect((await refusal('short')).status).toBe(401);
    const { session_id, token } = await start('Cleo');
    const socket = await visitorSocket(token);
    const [ada] = agents;
    const closed = await app.inject({
      method: 'POST', url: '/api/execute/LiveChatSession/close_session',
      headers: { authorization: `Bearer ${ada!.token}`, 'x-db-name': t.name, 'content-type': 'application/json' }, payload: { ids: [session_id] },
    });
    expect(closed.statusCode, closed.body).toBe(200);
    expect((await socket.closedWith()).code).toBe(4000);
    expect(socket.frames.some((f) => f.type === 'closed')).toBe(true);
    expect((await refusal(token)).status).toBe(401);
    const posted = await post('/livechat/message', { token, content: 'still there?' });
    expect(posted.status).toBe(401);
    expect(await posted.json()).toMatchObject({ detail: 'This chat is closed', error: 'AuthenticationError' });
    const agentPost = await reply(ada!, session_id, '<p>late reply</p>');
    expect(agentPost.statusCode).toBe(400);
  });
});

describe('bounds on what a visitor sends', () => {
  it('answers 413 to a message over the size and 429 over the rate, with Retry-After', async () => {
    const { token } = await start('Flo');
    process.env.FF_LIVECHAT_MAX_MESSAGE_CHARS = '50';
    process.env.FF_LIVECHAT_MESSAGES_PER_MINUTE = '3';
    try {
      const big = await post('/livechat/message', { token, content: 'x'.repeat(51) });
      expect(big.status).toBe(413);
      expect(await big.json()).toMatchObject({ error: 'PayloadTooLarge' });
      for (let i = 0; i < 3; i++) expect((await post('/livechat/message', { token, content: `m${i}` })).status).toBe(200);
      const flood = await post('/livechat/message', { token, content: 'one too many' });
      expect(flood.status).toBe(429);
      expect(flood.headers.get('retry-after')).toBe('10');
      expect(await flood.json()).toMatchObject({ error: 'TooManyRequests' });
    } finally {
      delete process.env.FF_LIVECHAT_MAX_MESSAGE_CHARS;
      delete process.env.FF_LIVECHAT_MESSAGES_PER_MINUTE;
    }
  });

  it('stores an attachment on the session and answers a signed URL the visitor can open', async () => {
    const { session_id, token } = await start('Gus');
    const socket = await visitorSocket(token);
    const res = await post('/livechat/attachment', { token, name: 'receipt.txt', base64: Buffer.from('paid 12 EUR').toString('base64'), mimetype: 'text/plain' });
    expect(res.status, await res.clone().text()).toBe(200);
    const file = await res.json() as { id: number; url: string };
    expect(file.url).toMatch(/^\/filestore\/view\/\d+\?db=.*&expires=\d+&sig=/);
    const body = await fetch(`${http}${file.url}`);
    expect(body.status).toBe(200);
    expect(await body.text()).toBe('paid 12 EUR');
    await socket.until(() => messages(socket).length === 1, 5_000, 'file message');
    expect(messages(socket)[0]!.attachments).toEqual([{ id: file.id, name: 'receipt.txt', mimetype: 'text/plain', url: expect.stringMatching(/^\/filestore\/view\//) }]);
    const onMessage = await t.run(() => Message.query({ model: 'LiveChatSession', document: session_id }).read(['attachments']));
    expect(onMessage[0]!.attachments).toEqual([expect.objectContaining({ id: file.id })]);
    await socket.close();
  });
});

describe('agents', () => {
  it('assigns the online agent with the fewest open sessions, who sees messages, typing and presence live', async () => {
    const [ada, bea] = agents as [MessagingPerson, MessagingPerson];
    const adaSocket = await agentSocket(ada);
    const beaSocket = await agentSocket(bea);
    // Ada has more open sessions than Bea: the new one goes to Bea.
    const openOf = (p: MessagingPerson) => t.run(() => LiveChatSession.query({ agent: p.uid, state: 'open' }).count());
    while ((await openOf(ada)) <= (await openOf(bea))) await t.run(() => LiveChatSession.create({ visitor_name: 'Filler', token_hash: 'f'.repeat(64), agent: ada.uid }));
    const started = await start('Hal');
    expect(started.agents_online).toBe(true);
    const [session] = await t.run(() => LiveChatSession.query({ id: started.session_id }).read(['agent', 'followers']));
    expect((session!.agent as { id: number }).id).toBe(bea.uid);
    expect((session!.followers as { user_id: number }[]).map((f) => f.user_id)).toEqual([bea.uid]);

    const visitor = await visitorSocket(started.token);
    await beaSocket.until(() => beaSocket.events('livechat_presence').some((e) => e.session_id === started.session_id && e.online), 5_000, 'online');
    visitor.send({ type: 'typing' });
    await beaSocket.until(() => beaSocket.events('livechat_typing').length > 0, 5_000, 'typing');
    expect(beaSocket.events('livechat_typing')[0]).toMatchObject({ session_id: started.session_id, visitor_name: 'Hal' });
    await post('/livechat/message', { token: started.token, content: 'Anyone?' });
    await beaSocket.until(() => beaSocket.events('livechat_message').length > 0, 5_000, 'livechat_message');
    expect(beaSocket.events('livechat_message')[0]).toMatchObject({ session_id: started.session_id, message: { content: '<p>Anyone?</p>', is_agent: false, author_name: 'Hal' } });
    expect(beaSocket.frames.some((f) => f.type === 'activity_update' && f.data.kind === 'message' && f.data.title === 'Hal')).toBe(true);
    expect(adaSocket.events('livechat_message').filter((e) => e.session_id === started.session_id)).toEqual([]);
    const [online] = await t.run(() => LiveChatSession.query({ id: started.session_id }).read(['visitor_online']));
    expect(online!.visitor_online).toBe(true);

    await visitor.close();
    await beaSocket.until(() => beaSocket.events('livechat_presence').some((e) => e.session_id === started.session_id && !e.online), 2_000, 'offline');
    const [offline] = await t.run(() => LiveChatSession.query({ id: started.session_id }).read(['visitor_online', 'last_seen']));
    expect(offline).toMatchObject({ visitor_online: false, last_seen: expect.any(String) });
    await adaSocket.close();
    await beaSocket.close();
  });

  it('with no agent online, every agent follows and the visitor is told the answer will come later', async () => {
    const started = await start('Ike');
    expect(started.agents_online).toBe(false);
    const [session] = await t.run(() => LiveChatSession.query({ id: started.session_id }).read(['agent', 'followers']));
    expect(session!.agent).toBeNull();
    expect((session!.followers as { user_id: number }[]).map((f) => f.user_id).sort()).toEqual(agents.map((a) => a.uid).sort());
    const socket = await visitorSocket(started.token);
    expect(history(socket).agents_online).toBe(false);
    await socket.close();
  });
});
