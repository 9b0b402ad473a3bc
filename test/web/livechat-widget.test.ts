/**
 * The live-chat widget (issue 28 item 5, CONTRACTS C5 "Live-chat widget") in Debian's Chromium,
 * embedded with one `<script type="module">` tag in a page of another site (`localhost`, while
 * FieldForge answers on `127.0.0.1`): it loads only its own files from our server, renders in a
 * shadow root (the page's styles do not reach it, its own do not reach the page), starts a chat
 * after solving the ALTCHA, shows agents' replies and never their notes, shows each message once,
 * resumes the same session after a reload (token in `localStorage`), says plainly that it is
 * offline while our server is down and, back, shows exactly what it missed; attaches a file;
 * shows the end of a chat; is keyboard usable, passes axe and fits 360 px.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { LiveChatSession } from '../../modules/livechat/models/livechat_session.js';
import { Message } from '../../modules/messaging/models/message.js';
import { buildApp } from '../../src/http/app.js';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { launchBrowser } from '../support/browser.js';
import { messagingPerson, type MessagingPerson } from '../support/messaging-person.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import type { FastifyInstance } from 'fastify';

let t: TestDatabase;
let app: FastifyInstance;
let port: number;
let site: Server;
let siteUrl: string;
let browser: Browser;
let agent: MessagingPerson;

const APP_OPTIONS = { dev: false, altchaMaxNumber: 40, livechat: { checkIntervalMs: 200, typingIntervalMs: 300 } } as const;

/** The other site's page: its own styles aimed at what the widget uses (`button`, `.launcher`, `h2`). */
const sitePage = (db: string, byQuery: boolean) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme shop</title>
<style>
  body { font-family: serif; color: rgb(200, 0, 0); }
  button { background: rgb(0, 128, 0); font-size: 30px; }
  .launcher, .panel { display: none; }
  h2 { text-transform: uppercase; }
</style></head>
<body><main><h1>Acme shop</h1><p>Our products.</p><button class="launcher" type="button">Site button</button></main>
${byQuery
    ? `<script type="module" src="http://127.0.0.1:${port}/livechat/widget.js?db=${db}"></script>`
    : `<script type="module" src="http://127.0.0.1:${port}/livechat/widget.js" data-db="${db}"></script>`}
</body></html>`;

async function startApp(): Promise<void> {
  app = await buildApp(t.platform, APP_OPTIONS);
  await app.listen({ host: '127.0.0.1', port });
}

beforeAll(async () => {
  t = await testDatabase('livechat');
  app = await buildApp(t.platform, APP_OPTIONS);
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
  site = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(sitePage(t.name, Boolean(req.url?.includes('by=query')))));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://localhost:${(site.address() as AddressInfo).port}/`;
  agent = await messagingPerson(t, 'Olga Agent', ['core.group_user', 'livechat.group_agent']);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await new Promise((resolve) => site?.close(resolve));
  await t?.close();
});

interface SitePage {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for. */
  requests: string[];
  errors: string[];
}

/** A page of the other site; a request to any host but the site and our server fails the test. */
async function openSite(context?: BrowserContext, viewport = { width: 1280, height: 800 }, path = ''): Promise<SitePage> {
  const ctx = context ?? await browser.newContext({ viewport });
  const requests: string[] = [];
  const errors: string[] = [];
  const allowed = new Set([new URL(siteUrl).host, `127.0.0.1:${port}`]);
  await ctx.route('**/*', (route) => {
    const url = new URL(route.request().url());
    requests.push(url.href);
    return allowed.has(url.host) ? route.continue() : route.abort('blockedbyclient');
  });
  const page = await ctx.newPage();
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(siteUrl + path);
  await page.getByRole('button', { name: 'Chat with us' }).waitFor();
  return { context: ctx, page, requests, errors };
}

const panel = (page: Page) => page.getByRole('dialog', { name: 'Chat' });
const articles = (page: Page) => panel(page).getByRole('log', { name: 'Messages' }).getByRole('article');

async function startChat(page: Page, name: string, email = ''): Promise<void> {
  await page.getByRole('button', { name: 'Chat with us' }).click();
  await panel(page).getByLabel('Name', { exact: true }).fill(name);
  if (email) await panel(page).getByLabel('Email', { exact: true }).fill(email);
  await panel(page).getByRole('button', { name: 'Start chat' }).click();
  await panel(page).getByLabel('Message', { exact: true }).waitFor();
}

async function send(page: Page, text: string): Promise<void> {
  const box = panel(page).getByLabel('Message', { exact: true });
  await box.fill(text);
  await box.press('Enter');
  await expect.poll(() => box.inputValue()).toBe('');
}

async function sessionOf(name: string): Promise<{ id: number; state: string; agent: unknown }> {
  const rows = await t.run(() => LiveChatSession.query({ visitor_name: name }).read(['id', 'state', 'agent']));
  expect(rows).toHaveLength(1);
  return rows[0] as { id: number; state: string; agent: unknown };
}

/** An API method of the session, called by the agent over HTTP. */
async function execute(session: number, method: string, inputs: Record<string, unknown>): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/api/execute/LiveChatSession/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'x-db-name': t.name, 'content-type': 'application/json' },
    body: JSON.stringify({ ids: [session], request_body: { inputs } }),
  });
  expect(res.status, await res.text()).toBe(200);
}

const reply = (session: number, content: string, message_type = 'comment') => execute(session, 'message_post', { content, message_type });

describe('the widget on another site', () => {
  it('loads only from our server, keeps styles apart both ways, starts a chat, shows replies once and never notes', async () => {
    const s = await openSite();
    const { page } = s;
    // Nothing from a third host: the site's page, then our widget's own files.
    const hosts = new Set(s.requests.map((u) => new URL(u).host));
    expect([...hosts].sort()).toEqual([new URL(siteUrl).host, `127.0.0.1:${port}`].sort());
    expect(s.requests.filter((u) => u.includes(`127.0.0.1:${port}`)).every((u) => /\/livechat\/|\/web\/vendor\//.test(u))).toBe(true);

    // The site's `.launcher { display: none }` and `button` rules do not reach the widget, nor do its styles reach the site.
    const launcher = page.getByRole('button', { name: 'Chat with us' });
    expect(await launcher.isVisible()).toBe(true);
    const style = await launcher.evaluate((el) => { const c = getComputedStyle(el); return { bg: c.backgroundColor, size: c.fontSize, family: c.fontFamily }; });
    expect(style.bg).not.toBe('rgb(0, 128, 0)');
    expect(style.size).not.toBe('30px');
    expect(style.family).not.toBe('serif');
    const siteButton = page.locator('main button.launcher');
    expect(await siteButton.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(0, 128, 0)');
    expect(await siteButton.isVisible()).toBe(false); // the site's own rule still applies to its own button
    expect(await page.locator('fieldforge-livechat').evaluate((el) => el.shadowRoot !== null)).toBe(true);

    await startChat(page, 'Wanda Widget', 'wanda@example.com');
    // No agent is on the main socket: the visitor is told the answer will come later.
    await expect.poll(() => panel(page).getByText(/No agent is online right now/).count()).toBe(1);
    const session = await sessionOf('Wanda Widget');
    expect(session.state).toBe('open');
    const stored = await page.evaluate(() => Object.entries(localStorage).filter(([k]) => k.startsWith('fieldforge-livechat:')));
    expect(stored).toHaveLength(1);
    expect(JSON.parse(stored[0]![1])).toMatchObject({ session_id: session.id });
    expect(await page.context().cookies()).toEqual([]);

    await send(page, 'Hello, is my order shipped?');
    await reply(session.id, '<p>Hello <b>Wanda</b>, let me look.</p>');
    await reply(session.id, '<p>Internal: ask the warehouse</p>', 'note');
    await expect.poll(() => articles(page).count()).toBe(2);
    await page.waitForTimeout(300); // the echo, the note (never sent) and any repeat would land by now
    const texts = await articles(page).allInnerTexts();
    expect(texts).toHaveLength(2);
    expect(texts[0]).toMatch(/Wanda Widget[\s\S]*Hello, is my order shipped\?/);
    expect(texts[1]).toMatch(/Olga Agent[\s\S]*Hello Wanda, let me look\./);
    expect(await articles(page).nth(1).locator('b').innerText()).toBe('Wanda');
    expect(texts.join('\n')).not.toContain('Internal');
    const posted = await t.run(() => Message.query({ model: 'LiveChatSession', document: session.id, message_type: 'comment' }).read(['content', 'livechat_visitor']));
    expect(posted.filter((m) => m.livechat_visitor)).toHaveLength(1);

    expect(s.errors).toEqual([]);
    await s.context.close();
  });

  it('resumes the same chat after a reload, with its history, and does not start another', async () => {
    const s = await openSite();
    await startChat(s.page, 'Rita Reload');
    const session = await sessionOf('Rita Reload');
    await send(s.page, 'First line');
    await reply(session.id, 'An answer');
    await expect.poll(() => articles(s.page).count()).toBe(2);
    await s.page.reload();
    await s.page.getByRole('button', { name: 'Chat with us' }).click();
    await expect.poll(() => articles(s.page).count()).toBe(2);
    expect((await articles(s.page).allInnerTexts()).join('\n')).toMatch(/First line[\s\S]*An answer/);
    await sessionOf('Rita Reload'); // still one session of that name
    expect(await panel(s.page).getByLabel('Name', { exact: true }).isVisible()).toBe(false);
    await s.context.close();
  });

  it('says it is offline while our server is down, and back shows exactly what it missed', async () => {
    const s = await openSite();
    await startChat(s.page, 'Otto Outage');
    const session = await sessionOf('Otto Outage');
    await send(s.page, 'Before the outage');
    await expect.poll(() => articles(s.page).count()).toBe(1);

    const attempts: number[] = [];
    s.page.on('websocket', () => attempts.push(Date.now()));
    await app.close();
    const down = Date.now();
    await expect.poll(() => panel(s.page).getByRole('status').innerText(), { timeout: 10_000 }).toMatch(/Offline: reconnecting in \d+ s\./);
    // The agent answers meanwhile (through the model service of a worker still up: ours is down).
    await t.run(async () => {
      const record = (await LiveChatSession.query({ id: session.id }).first())!;
      await (record as unknown as { message_post(i: object): Promise<unknown> }).message_post({ content: 'Sent while you were away' });
    }, { uid: agent.uid });
    // Backoff: over seven seconds down, waits of 0.5–1, 1–2, 2–4 s allow at most four attempts (a fixed 1 s retry would make seven).
    await s.page.waitForTimeout(Math.max(0, 7_000 - (Date.now() - down)));
    const tried = attempts.filter((at) => at >= down).length;
    expect(tried).toBeGreaterThanOrEqual(2);
    expect(tried).toBeLessThanOrEqual(4);
    await startApp();
    await expect.poll(() => articles(s.page).count(), { timeout: 20_000 }).toBe(2);
    await expect.poll(() => panel(s.page).innerText()).not.toMatch(/Offline:|Connecting…/);
    await s.page.waitForTimeout(300);
    const texts = await articles(s.page).allInnerTexts();
    expect(texts).toHaveLength(2);
    expect(texts[1]).toContain('Sent while you were away');
    await s.context.close();
  }, 60_000);

  it('attaches a file, answered with a link our server signs', async () => {
    const s = await openSite();
    await startChat(s.page, 'Fred File');
    const session = await sessionOf('Fred File');
    const chooser = s.page.waitForEvent('filechooser');
    await panel(s.page).getByRole('button', { name: 'Attach file' }).click();
    await (await chooser).setFiles({ name: 'invoice.txt', mimeType: 'text/plain', buffer: Buffer.from('Invoice 42: 99 EUR') });
    const link = panel(s.page).getByRole('link', { name: 'invoice.txt' });
    await link.waitFor();
    await s.page.waitForTimeout(300);
    expect(await articles(s.page).count()).toBe(1); // the pending post and its echo are one message
    const href = (await link.getAttribute('href'))!;
    expect(new URL(href).origin).toBe(`http://127.0.0.1:${port}`);
    const file = await fetch(href);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('Invoice 42: 99 EUR');
    const messages = await t.run(() => Message.query({ model: 'LiveChatSession', document: session.id }).read(['attachments']));
    expect((messages[0]!.attachments as unknown[]).length).toBe(1);
    await s.context.close();
  });

  it('shows the end of a chat and offers a new one; refused input keeps the text and says why', async () => {
    const s = await openSite();
    await startChat(s.page, 'Clara Closed');
    const session = await sessionOf('Clara Closed');
    const box = panel(s.page).getByLabel('Message', { exact: true });
    await box.fill('x'.repeat(5001));
    // The textarea holds at most 5,000 characters, as the server does: the visitor cannot type past it.
    expect((await box.inputValue()).length).toBe(5000);
    await box.fill('Thanks, bye');
    await box.press('Enter');
    await expect.poll(() => articles(s.page).count()).toBe(1);
    // Over the rate bound (one a minute here), the refusal is said and the text stays to send later.
    process.env.FF_LIVECHAT_MESSAGES_PER_MINUTE = '1';
    try {
      await box.fill('One more thing');
      await box.press('Enter');
      await panel(s.page).getByRole('alert').filter({ hasText: /too many|too fast|wait/i }).waitFor();
      expect(await box.inputValue()).toBe('One more thing');
      expect(await articles(s.page).count()).toBe(1);
    } finally {
      delete process.env.FF_LIVECHAT_MESSAGES_PER_MINUTE;
    }

    await execute(session.id, 'close_session', {});
    await panel(s.page).getByText('This chat has ended.').waitFor();
    expect(await box.isVisible()).toBe(false);
    expect(await s.page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('fieldforge-livechat:')))).toEqual([]);
    // The history stays on screen; a new chat is one click away.
    expect(await articles(s.page).count()).toBe(1);
    await panel(s.page).getByRole('button', { name: 'Start a new chat' }).click();
    await panel(s.page).getByLabel('Name', { exact: true }).waitFor();
    await s.context.close();
  });

  it('is usable by keyboard alone, passes axe, and fits 360 px (embedded by `?db=` this time)', async () => {
    const s = await openSite(undefined, { width: 360, height: 740 }, '?by=query');
    const { page } = s;
    await page.getByRole('button', { name: 'Chat with us' }).focus();
    await page.keyboard.press('Enter');
    const name = panel(page).getByLabel('Name', { exact: true });
    await expect.poll(() => name.evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement)).toBe(true);
    await expect.poll(() => panel(page).getByRole('group', { name: 'Human verification' }).innerText()).toContain('Verified');
    let findings = await seriousViolations(page);
    expect(findings, describeFindings(findings)).toEqual([]);
    await page.keyboard.type('Kim Keys');
    await page.keyboard.press('Tab'); // Email
    await page.keyboard.press('Tab'); // Start chat
    await page.keyboard.press('Enter');
    const box = panel(page).getByLabel('Message', { exact: true });
    await box.waitFor();
    await expect.poll(() => box.evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement)).toBe(true);
    await page.keyboard.type('Typed, and sent with Enter');
    await page.keyboard.press('Enter');
    await expect.poll(() => articles(page).count()).toBe(1);
    findings = await seriousViolations(page);
    expect(findings, describeFindings(findings)).toEqual([]);
    // At 360 px the panel fits the width: nothing scrolls sideways, nothing is cut off.
    const box360 = await panel(page).boundingBox();
    expect(box360!.x).toBeGreaterThanOrEqual(0);
    expect(box360!.x + box360!.width).toBeLessThanOrEqual(360);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    // Escape closes the panel and gives the focus back to the launcher.
    await page.keyboard.press('Escape');
    expect(await panel(page).isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Chat with us' }).evaluate((el) => el === (el.getRootNode() as ShadowRoot).activeElement)).toBe(true);
    await s.context.close();
  });
});
