/**
 * The live chat's agent side in the web client (issue 28 item 4, CONTRACTS C5 "Agents"), in
 * Debian's Chromium with the real sockets: the `Live Chat` menu lists the sessions with the
 * visitor's online dot, live as the visitor's widget connects and leaves; a session's form has the
 * chatter, where "… is typing" and the visitor's messages (its files as links the agent opens)
 * appear without a reload, `Send message` reaches the visitor's socket and `Log note` never does,
 * and `Close session` ends the chat on the visitor's side.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { solvedAltcha } from '../support/altcha.js';
import { TestSocket } from '../support/socket-client.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
const AGENT = { name: 'Petra Agent', email: 'petra.agent@example.test', password: 'petra-password-for-tests' };
const SESSIONS = 'livechat.action_livechat_sessions';

beforeAll(async () => {
  t = await testDatabase('livechat');
  [served, browser] = await Promise.all([serveApp(t, { altchaMaxNumber: 20, livechat: { checkIntervalMs: 200, typingIntervalMs: 300 } }), launchBrowser()]);
  await createUserWithPassword(t, { ...AGENT, groups: ['core.group_user', 'livechat.group_agent'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

async function visitor(name: string): Promise<{ session_id: number; token: string }> {
  const res = await served.app.inject({
    method: 'POST', url: '/livechat/session', headers: { 'content-type': 'application/json', 'x-db-name': t.name },
    payload: JSON.stringify({ altcha: await solvedAltcha(served.app, t.name, '/livechat/altcha'), name }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const visitorSocket = (token: string) =>
  TestSocket.open(`${served.baseUrl.replace('http', 'ws')}/livechat/ws?token=${token}&db=${t.name}`, {}, (f) => f.type === 'history');

async function agentPage(hash: string): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await signInContext(t, served, g.context, AGENT.email, AGENT.password);
  await g.page.goto(`/web#${hash}`);
  return g;
}

const chatter = (page: Page) => page.getByRole('region', { name: 'Chatter' });

describe('agents', () => {
  it('see the sessions with the visitor’s online dot, live', async () => {
    const { session_id, token } = await visitor('Lena List');
    const g = await agentPage(`action=${SESSIONS}`);
    const row = g.page.getByRole('row').filter({ hasText: 'Lena List' });
    await row.waitFor({ timeout: 15_000 });
    const dot = row.locator('.ff-visitor-presence');
    expect(await dot.getAttribute('data-presence')).toBe('offline');
    expect(await dot.innerText()).toContain('Offline');
    const socket = await visitorSocket(token);
    await expect.poll(() => dot.getAttribute('data-presence'), { timeout: 8_000 }).toBe('online');
    socket.ws.close();
    await expect.poll(() => dot.getAttribute('data-presence'), { timeout: 8_000 }).toBe('offline');
    expect(session_id).toBeGreaterThan(0);
    g.assertClean();
    await g.close();
  });

  it('see typing and messages live in the chatter, reply to the visitor and keep notes internal', async () => {
    const { session_id, token } = await visitor('Vera Visitor');
    const socket = await visitorSocket(token);
    const g = await agentPage(`action=${SESSIONS}&id=${session_id}`);
    const region = chatter(g.page);
    await region.waitFor({ timeout: 15_000 });
    expect(await g.page.locator('.ff-visitor-presence').first().getAttribute('data-presence')).toBe('online');

    socket.send({ type: 'typing' });
    await expect.poll(() => region.getByRole('status').filter({ hasText: 'is typing' }).innerText(), { timeout: 8_000 }).toBe('Vera Visitor is typing…');
    const posted = await served.app.inject({
      method: 'POST', url: '/livechat/message', headers: { 'content-type': 'application/json', 'x-db-name': t.name },
      payload: JSON.stringify({ token, content: 'Where is my parcel?' }),
    });
    expect(posted.statusCode, posted.body).toBe(200);
    await expect.poll(() => region.getByRole('article').count(), { timeout: 8_000 }).toBe(1);
    expect(await region.getByRole('article').first().innerText()).toMatch(/Vera Visitor[\s\S]*Where is my parcel\?/);
    await expect.poll(() => region.getByText('is typing').count()).toBe(0);

    // A visitor's file: a link in the chatter that the agent's own session opens.
    const file = await served.app.inject({
      method: 'POST', url: '/livechat/attachment', headers: { 'content-type': 'application/json', 'x-db-name': t.name },
      payload: JSON.stringify({ token, name: 'receipt.txt', base64: Buffer.from('Receipt 7').toString('base64'), mimetype: 'text/plain' }),
    });
    expect(file.statusCode, file.body).toBe(200);
    const link = region.getByRole('link', { name: 'receipt.txt' });
    await link.waitFor({ timeout: 8_000 });
    const href = (await link.getAttribute('href'))!;
    const download = await g.page.evaluate(async (url) => { const r = await fetch(url); return { status: r.status, text: await r.text() }; }, href);
    expect(download).toEqual({ status: 200, text: 'Receipt 7' });

    const findings = await seriousViolations(g.page);
    expect(findings, describeFindings(findings)).toEqual([]);

    const write = async (mode: string, text: string) => {
      await region.getByRole('button', { name: mode, exact: true }).click();
      await region.getByLabel('Message', { exact: true }).fill(text);
      await region.getByRole('button', { name: 'Send', exact: true }).click();
    };
    await write('Send message', 'It left this morning.');
    await socket.next((f) => f.type === 'message' && f.message.is_agent === true);
    await write('Log note', 'Internal: check the carrier');
    await expect.poll(() => region.getByRole('article').count()).toBe(4);
    await new Promise((r) => setTimeout(r, 300));
    const seen = socket.frames.filter((f) => f.type === 'message').map((f) => f.message);
    expect(seen.map((m) => [m.author_name, m.is_agent])).toEqual([['Vera Visitor', false], ['Vera Visitor', false], [AGENT.name, true]]);
    expect(JSON.stringify(socket.frames)).not.toContain('Internal');
    // `Close session` on the form ends the chat: the visitor's socket is told and closed (4000).
    await g.page.getByRole('button', { name: 'Close session', exact: true }).click();
    await socket.next((f) => f.type === 'closed', 8_000);
    await socket.until(() => socket.closed !== null, 5_000, 'close');
    expect(socket.closed!.code).toBe(4000);
    g.assertClean();
    await g.close();
  });
});
