/**
 * The web client's realtime socket (CONTRACTS C4, spec §6.1–§6.2, issue 14 item 7) in Debian's
 * Chromium through the shell, against the real socket of a served app: a `notification` frame is
 * a toast; after the server drops the socket the client reconnects within the first backoff step
 * and sends its watches again; a sign-out elsewhere (close code 4001) takes the tab to the
 * sign-in page instead of reconnecting; a `reload` client action refetches the list; presence
 * dots by a project's Manager (a link to `User`) in the form and the list turn on and off as that
 * person's session connects and disconnects; the import dialog's progress bar moves with `import_progress` frames
 * (no polling while the socket is up) and falls back to polling when the socket is down.
 * Frames are pushed with the module API (`send_notification`, `send_realtime`) as module code does.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Request, Route } from 'playwright-core';
import { User } from '../../modules/core/models/index.js';
import { send_notification, send_realtime } from '../../src/realtime/send.js';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/web/import/tasks.csv', import.meta.url));
const ADMIN = { email: 'admin@example.com', password: 'admin-password-for-tests' };
const BOB = { email: 'bob.presence@example.test', password: 'bob-password-for-tests' };

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let adminUid: number;
let bobUid: number;

beforeAll(async () => {
  t = await testDatabase('full');
  // A short credential re-check, so that a sign-out closes the socket (4001) within a second.
  [served, browser] = await Promise.all([serveApp(t, { realtime: { checkIntervalMs: 300 } }), launchBrowser()]);
  adminUid = await t.run(async () => (await User.query({ email: ADMIN.email }).ids())[0]!);
  bobUid = await createUserWithPassword(t, { name: 'Bob Presence', email: BOB.email, password: BOB.password, groups: ['core.group_user'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

interface LivePage extends GuardedPage {
  sent: Record<string, any>[];
  received: Record<string, any>[];
  hellos(): number;
}

/** A signed-in page on `/web#…` whose socket has said hello, with the frames it sent and received. */
async function livePage(hash: string, user = ADMIN): Promise<LivePage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await signInContext(t, served, g.context, user.email, user.password);
  const sent: Record<string, any>[] = [];
  const received: Record<string, any>[] = [];
  g.page.on('websocket', (ws) => {
    ws.on('framesent', (f) => sent.push(JSON.parse(String(f.payload))));
    ws.on('framereceived', (f) => received.push(JSON.parse(String(f.payload))));
  });
  await g.page.goto(`/web#${hash}`);
  const hellos = () => received.filter((f) => f.data?.event === 'hello').length;
  await expect.poll(hellos, { timeout: 15_000 }).toBe(1);
  return { ...g, sent, received, hellos };
}

/** Runs module-API pushes in a committed transaction of the test database. */
const push = (fn: () => void) => t.run(async () => fn());

describe('the realtime socket in the web client', () => {
  it('shows a notification frame as a toast', async () => {
    const g = await livePage('');
    await push(() => send_notification(adminUid, { title: 'Order confirmed', message: 'S00042 is confirmed', icon: 'check' }));
    const toast = g.page.getByRole('status').filter({ hasText: 'S00042 is confirmed' });
    await toast.waitFor();
    await expect(toast.innerText()).resolves.toMatch(/Order confirmed/);
    g.assertClean();
    await g.close();
  });

  it('reconnects after the server drops the socket, within the first backoff step, and sends its watch again', async () => {
    const res = await t.api('POST', '/api/create/Contact', { name: 'Reconnecting Rita' });
    const id = res.json().id as number;
    const g = await livePage(`action=contacts.action_contacts&view=form&id=${id}`);
    const watchers = () => served.app.realtime.watchersOf(t.name, 'Contact', id);
    await expect.poll(() => watchers().size, { timeout: 10_000 }).toBe(1);
    // The server side goes away (as on a worker restart): close the page's socket from the hub.
    const dropped = Date.now();
    for (const client of watchers()) client.close(1012, 'Service restart');
    await expect.poll(() => g.hellos(), { timeout: 5_000 }).toBe(2);
    expect(Date.now() - dropped).toBeLessThan(2_500); // first step: 0.5–1 s
    await expect.poll(() => watchers().size, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => g.sent.filter((f) => f.type === 'watch')).toEqual([
      { type: 'watch', data: { model: 'Contact', id } },
      { type: 'watch', data: { model: 'Contact', id } },
    ]);
    // And it is live again: a notification still arrives.
    await push(() => send_notification(adminUid, { title: 'Back', message: 'Live again after the reconnect' }));
    await g.page.getByRole('status').filter({ hasText: 'Live again after the reconnect' }).waitFor();
    g.assertClean();
    await g.close();
  });

  it('goes to the sign-in page when the session is signed out elsewhere (4001) rather than reconnecting', async () => {
    const g = await livePage('action=contacts.action_contacts');
    // The list is drawn and the page idle: only the socket can notice the sign-out.
    await g.page.locator('table').first().waitFor();
    await g.page.waitForLoadState('networkidle');
    // Another tab of the same browser signs out: same cookies, the client's own code not involved.
    await g.page.evaluate(async () => {
      const csrf = decodeURIComponent(/(?:^|;\s*)ff_csrf=([^;]*)/.exec(document.cookie)?.[1] ?? '');
      await fetch('/auth/logout', { method: 'POST', headers: { 'content-type': 'application/json', 'X-CSRF-Token': csrf }, body: '{}' });
    });
    await expect.poll(() => g.page.url(), { timeout: 8_000 }).toMatch(/\/web\/login\?next=/);
    expect(new URL(g.page.url()).searchParams.get('next')).toBe('/web#action=contacts.action_contacts');
    expect(g.hellos()).toBe(1);
    g.assertClean();
    await g.close();
  });

  it('refetches the list on a reload client action', async () => {
    const g = await livePage('action=contacts.action_contacts');
    const rows = g.page.locator('table tbody tr[data-id]');
    await rows.first().waitFor();
    const before = await rows.count();
    expect((await t.api('POST', '/api/create/Contact', { name: 'Aaron Arrived Live' })).statusCode).toBe(200);
    await g.page.waitForTimeout(200);
    expect(await rows.count()).toBe(before);
    await push(() => send_realtime(adminUid, 'client_action', { action: 'reload' }));
    await g.page.getByRole('cell', { name: 'Aaron Arrived Live', exact: true }).waitFor();
    g.assertClean();
    await g.close();
  });

  it('shows presence dots by a project’s Manager in the form and the list, on and off as that person connects and leaves', async () => {
    const bobs = (await t.api('POST', '/api/create/ProjectProject', { name: 'Bob’s project', manager: bobUid })).json().id as number;
    expect((await t.api('POST', '/api/create/ProjectProject', { name: 'Admin’s project', manager: adminUid })).statusCode).toBe(200);

    const g = await livePage(`action=project.action_project_projects&view=form&id=${bobs}`);
    const dot = g.page.locator('.ff-user-link [data-presence]');
    await expect.poll(() => dot.getAttribute('aria-label')).toBe('Offline');
    expect(await g.page.getByRole('img', { name: 'Offline' }).count()).toBe(1);

    const bob = await livePage('', BOB);
    await expect.poll(() => dot.getAttribute('aria-label')).toBe('Online');
    await bob.close();
    await expect.poll(() => dot.getAttribute('aria-label')).toBe('Offline');

    // The list: one dot per Manager cell; the administrator (this very page) is online.
    await g.page.evaluate(() => { location.hash = '#action=project.action_project_projects&view=list'; });
    const row = (name: string) => g.page.locator('table tbody tr[data-id]').filter({ hasText: name });
    await expect.poll(() => row('Admin’s project').locator('[data-presence]').getAttribute('aria-label')).toBe('Online');
    expect(await row('Bob’s project').locator('[data-presence]').getAttribute('aria-label')).toBe('Offline');
    const bobAgain = await livePage('', BOB);
    await expect.poll(() => row('Bob’s project').locator('[data-presence]').getAttribute('aria-label')).toBe('Online');
    await bobAgain.close();
    await expect.poll(() => row('Bob’s project').locator('[data-presence]').getAttribute('aria-label')).toBe('Offline');
    g.assertClean();
    await g.close();
  });

  it('moves the import progress bar with the socket’s import_progress frames, and polls only when the socket is down', async () => {
    const g = await livePage('action=project.action_project_tasks');
    const { page } = g;
    const polls: string[] = [];
    page.on('request', (r: Request) => { if (r.url().includes('/api/import-progress/')) polls.push(r.url()); });
    // The import request is held back (then sent on), so the bar can only move by the frames pushed meanwhile.
    let release: () => void = () => {};
    let progressId = '';
    await page.route('**/api/import/ProjectTask', async (route: Route) => {
      progressId = JSON.parse(route.request().postData() ?? '{}').progress_id ?? '';
      await new Promise<void>((resolve) => { release = resolve; });
      await route.fallback();
    });
    const importOnce = async () => {
      await page.getByRole('button', { name: 'Import', exact: true }).click();
      const dialog = page.getByRole('dialog', { name: 'Import Tasks' });
      await dialog.getByLabel('File (CSV or XLSX)').setInputFiles(FIXTURE);
      await expect.poll(() => dialog.getByLabel('Import column Name as').inputValue()).toBe('name');
      progressId = '';
      await dialog.getByRole('button', { name: 'Import', exact: true }).click();
      await expect.poll(() => progressId).not.toBe('');
      return dialog;
    };
    const bar = (dialog: ReturnType<typeof page.getByRole>) => dialog.getByRole('progressbar', { name: 'Import progress' })
      .evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max]);

    const dialog = await importOnce();
    await expect.poll(() => bar(dialog)).toEqual([0, 4]);
    await push(() => send_realtime(adminUid, 'import_progress', { progress_id: progressId, model: 'ProjectTask', done: 2, total: 4 }));
    await expect.poll(() => bar(dialog)).toEqual([2, 4]);
    // Another import's frames do not move this bar; an older frame never moves it back.
    await push(() => send_realtime(adminUid, 'import_progress', { progress_id: 'someone-else', model: 'ProjectTask', done: 4, total: 4 }));
    await push(() => send_realtime(adminUid, 'import_progress', { progress_id: progressId, model: 'ProjectTask', done: 1, total: 4 }));
    await push(() => send_realtime(adminUid, 'import_progress', { progress_id: progressId, model: 'ProjectTask', done: 3, total: 4 }));
    await expect.poll(() => bar(dialog)).toEqual([3, 4]);
    expect(polls).toEqual([]);
    release();
    await expect.poll(() => dialog.getByRole('alert').innerText()).toMatch(/created/);
    expect(polls).toEqual([]);
    await dialog.locator('.ff-button').filter({ hasText: 'Close' }).click();

    // The socket down (as while it reconnects): the dialog polls GET /api/import-progress instead.
    // (A string, so that the test runner's transform leaves the page's own `import()` alone.)
    await page.evaluate("import('/web/client/realtime/socket.js').then((m) => m.stopRealtime())");
    const second = await importOnce();
    await expect.poll(() => polls.length).toBeGreaterThan(0);
    expect(polls.every((u) => u.endsWith(`/api/import-progress/${progressId}`))).toBe(true);
    release();
    await expect.poll(() => second.getByRole('alert').innerText()).toMatch(/created/);
    g.assertClean();
    await g.close();
  });
});
