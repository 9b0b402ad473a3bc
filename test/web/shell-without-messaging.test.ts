/**
 * The app shell in a database without the messaging module (CONTRACTS C5 "Bell"), in Debian's
 * Chromium: no bell is drawn and the feed is never asked for — not even once to learn, from a 404,
 * that it is not there — so the console stays free of failed requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('core');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

describe('the shell without messaging', () => {
  it('draws no bell and asks nothing of the activity stream, also after the socket reconnects', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
    const asked: string[] = [];
    const failed: string[] = [];
    g.page.on('request', (req) => asked.push(new URL(req.url()).pathname));
    g.page.on('response', (res) => {
      if (res.status() >= 400) failed.push(`${res.status()} ${new URL(res.url()).pathname}`);
    });
    let hellos = 0;
    g.page.on('websocket', (ws) => ws.on('framereceived', (f) => {
      if (String(f.payload).includes('"hello"')) hellos++;
    }));
    await g.page.goto('/web#action=core.action_companies&view=form&id=1');
    await g.page.getByLabel('Name', { exact: true }).first().waitFor();
    expect(asked).toContain('/api/web-modules');
    // The socket drops and comes back (a worker restart): a reconnect reads the count where there is one.
    const watchers = () => served.app.realtime.watchersOf(t.name, 'Company', 1);
    await expect.poll(() => watchers().size).toBe(1);
    for (const client of watchers()) client.close(1012, 'Service restart');
    await expect.poll(() => hellos).toBe(2);
    await expect.poll(() => watchers().size).toBe(1);
    await g.page.waitForLoadState('networkidle');
    expect(asked.filter((p) => p.startsWith('/api/activity-stream'))).toEqual([]);
    expect(await g.page.getByRole('button', { name: 'Notifications' }).count()).toBe(0);
    expect(failed).toEqual([]);
    expect(g.consoleErrors).toEqual([]);
    g.assertClean();
    await g.close();
  });
});
