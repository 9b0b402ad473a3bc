/**
 * Steps the browser tests of messaging share (CONTRACTS C5 "in the web client"): a served test
 * database with the administrator (whose page is under test) and Bob, a project user who writes
 * to her from his own session; requests as either person through a session bearer token (a
 * signed-in person, not an API key: marking read refuses keys); a signed-in page whose socket has
 * said hello (clean: no foreign request, no uncaught error, nothing its Content-Security-Policy
 * refused); and the bell's badge as the page shows it.
 */
import { expect } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { User } from '../../modules/core/models/index.js';
import { openSession } from '../../src/auth/sessions.js';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

export const ADMIN = { email: 'admin@example.com', password: 'admin-password-for-tests' };
export const BOB = { name: 'Bob Builder', email: 'bob.msg@example.test', password: 'bob-password-for-tests' };

export interface Person {
  uid: number;
  email: string;
  password: string;
  /** A JSON request to the served app as this person (a session bearer token). */
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<{ status: number; json: any; body: string }>;
}

export interface MessagingWorld {
  t: TestDatabase;
  served: ServedApp;
  browser: Browser;
  admin: Person;
  bob: Person;
  close(): Promise<void>;
}

/** Another person of the world (a user created by the test), to call the API as. */
export function personOf(w: Pick<MessagingWorld, 't' | 'served'>, uid: number, email: string, password: string): Promise<Person> {
  return person(w.t, w.served, uid, email, password);
}

async function person(t: TestDatabase, served: ServedApp, uid: number, email: string, password: string): Promise<Person> {
  const tokens = await t.run(() => openSession(uid, { dbName: t.name, secret: t.platform.secret, sessionHours: 2 }));
  return {
    uid, email, password,
    async call(method, url, body) {
      const res = await served.app.inject({
        method, url,
        headers: { authorization: `Bearer ${tokens.access_token}`, 'x-db-name': t.name, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      let json: any = null;
      try {
        json = res.json();
      } catch {
        // not JSON
      }
      return { status: res.statusCode, json, body: res.body };
    },
  };
}

export async function messagingWorld(): Promise<MessagingWorld> {
  const t = await testDatabase('full');
  const [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  const adminUid = await t.run(async () => (await User.query({ email: ADMIN.email }).ids())[0]!);
  const bobUid = await createUserWithPassword(t, {
    name: BOB.name, email: BOB.email, password: BOB.password,
    groups: ['core.group_user', 'contacts.group_contacts_user', 'project.group_project_user'],
  });
  return {
    t, served, browser,
    admin: await person(t, served, adminUid, ADMIN.email, ADMIN.password),
    bob: await person(t, served, bobUid, BOB.email, BOB.password),
    async close() {
      await browser.close();
      await served.close();
      await t.close();
    },
  };
}

/** `body` of a successful answer; fails the test with the server's words otherwise. */
export async function ok<T = any>(answer: Promise<{ status: number; json: any; body: string }>): Promise<T> {
  const res = await answer;
  expect(res.status, res.body).toBe(200);
  return res.json as T;
}

/** A task created by `by` (its creator follows it), followed by each of `followers` too. */
export async function taskFollowedBy(by: Person, name: string, followers: Person[] = []): Promise<number> {
  const created = await ok<{ id: number }>(by.call('POST', '/api/create/ProjectTask', { name }));
  for (const p of followers) await ok(p.call('POST', `/api/execute/ProjectTask/message_follow`, { ids: [created.id], request_body: { inputs: {} } }));
  return created.id;
}

/** `by` posts on the task through `message_post`; answers the message id. */
export async function post(by: Person, task: number, inputs: { content: string; message_type?: string; mention_ids?: number[] }): Promise<number> {
  const answer = await ok<{ result: { id: number } }>(by.call('POST', '/api/execute/ProjectTask/message_post', { ids: [task], request_body: { inputs } }));
  return answer.result.id;
}

/** The person's unread count as the server counts it. */
export async function serverCount(p: Person): Promise<number> {
  return (await ok<{ count: number }>(p.call('GET', '/api/activity-stream/unread-count'))).count;
}

export interface LivePage extends GuardedPage {
  received: Record<string, any>[];
  sent: Record<string, any>[];
}

/** A signed-in page on `/web#hash` whose socket said hello (and, with `label`, once that field shows); `dark`: the dark theme. */
export async function livePage(w: MessagingWorld, who: Person, hash: string, options: { width?: number; label?: string; dark?: boolean } = {}): Promise<LivePage> {
  const g = await guardedPage(w.browser, w.served.baseUrl, {
    db: w.t.name,
    context: {
      ...(options.width ? { viewport: { width: options.width, height: 760 } } : {}),
      ...(options.dark ? { colorScheme: 'dark' as const } : {}),
    },
  });
  await signInContext(w.t, w.served, g.context, who.email, who.password);
  const received: Record<string, any>[] = [];
  const sent: Record<string, any>[] = [];
  g.page.on('websocket', (ws) => {
    ws.on('framereceived', (f) => received.push(JSON.parse(String(f.payload))));
    ws.on('framesent', (f) => sent.push(JSON.parse(String(f.payload))));
  });
  await g.page.goto(`/web#${hash}`);
  await expect.poll(() => received.some((f) => f.data?.event === 'hello'), { timeout: 15_000 }).toBe(true);
  if (options.label) await g.page.getByLabel(options.label, { exact: true }).first().waitFor({ timeout: 15_000 });
  return {
    ...g, received, sent,
    // Nothing the page's Content-Security-Policy refused either (an inline style, a foreign image).
    assertClean() {
      g.assertClean();
      const refused = g.consoleErrors.filter((m) => /Content Security Policy/i.test(m));
      if (refused.length) throw new Error(`the page broke its Content-Security-Policy: ${refused.join('\n')}`);
    },
  };
}

export const bellButton = (page: Page): Locator => page.getByRole('button', { name: 'Notifications', exact: true });

/** What the badge shows: its text, or '' when it is hidden (no unread). */
export async function badge(page: Page): Promise<string> {
  const shown = page.locator('.ff-bell .ff-bell__badge');
  return (await shown.count()) ? (await shown.innerText()).trim() : '';
}

export const chatter = (page: Page): Locator => page.getByRole('region', { name: 'Chatter' });

export const TASKS = 'project.action_project_tasks';
