/**
 * The web client over its user's socket limit (issue 25 item 7), in Debian's Chromium against a
 * served app that lets a user hold one socket: a second tab's socket is refused (an `error` frame
 * `TooManySockets`, then close 4029) and the tab says so once, in a warning that stays, instead of
 * going silently without live updates; it keeps retrying with its backoff, and once the first tab
 * closes it connects by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password-for-tests' };

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t, { realtime: { maxSocketsPerUser: 1 } }), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

describe('a tab over the socket limit', () => {
  it('says live updates are paused, once, and connects by itself when another tab closes', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await signInContext(t, served, g.context, ADMIN.email, ADMIN.password);
    const hellos = new Map<object, number>();
    const refusals = new Map<object, number>();
    const watch = (page: typeof g.page) => page.on('websocket', (ws) => ws.on('framereceived', (f) => {
      const frame = JSON.parse(String(f.payload));
      if (frame.data?.event === 'hello') hellos.set(page, (hellos.get(page) ?? 0) + 1);
      if (frame.type === 'error' && frame.data?.error === 'TooManySockets') refusals.set(page, (refusals.get(page) ?? 0) + 1);
    }));
    watch(g.page);
    await g.page.goto('/web#');
    await expect.poll(() => hellos.get(g.page) ?? 0, { timeout: 15_000 }).toBe(1);

    const second = await g.context.newPage();
    watch(second);
    await second.goto('/web#');
    const warning = second.getByRole('status').filter({ hasText: 'Too many FieldForge tabs or windows are open' });
    await warning.waitFor({ timeout: 15_000 });
    await expect(warning.innerText()).resolves.toMatch(/Live updates paused/);
    // It keeps retrying, and says it once.
    await expect.poll(() => refusals.get(second) ?? 0, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    expect(await second.getByText('Too many FieldForge tabs or windows are open').count()).toBe(1);
    expect(hellos.get(second) ?? 0).toBe(0);

    await g.page.close();
    await expect.poll(() => hellos.get(second) ?? 0, { timeout: 30_000 }).toBe(1);
    g.assertClean();
    await g.close();
  }, 90_000);
});
