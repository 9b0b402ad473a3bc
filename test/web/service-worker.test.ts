/**
 * The web client's service worker (`/web/sw.js`, issue 27 item 5) in Debian's Chromium: a push
 * delivered to it (through the DevTools protocol's `ServiceWorker.deliverPushMessage`, as a push
 * service would) shows a notification with the author as title, the body, and the record's URL
 * its click opens; a push that is not JSON still shows its text; a click on a notification (the
 * `notificationclick` event the browser would dispatch, handed to the worker) closes it and
 * navigates the open tab to the record's form.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let g: GuardedPage;

beforeAll(async () => {
  t = await testDatabase('core');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await g.context.grantPermissions(['notifications'], { origin: served.baseUrl });
});
afterAll(async () => {
  await g?.close();
  await browser?.close();
  await served?.close();
  await t?.close();
});

interface Shown {
  title: string;
  body: string;
  tag: string;
  data: { url: string };
}

describe('/web/sw.js', () => {
  it('shows a pushed message as a notification that leads to the record', async () => {
    const { page, context } = g;
    await page.goto('/web/theme.css');
    const cdp = await context.newCDPSession(page);
    const registered = new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', (e: { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] }) => {
        const reg = e.registrations.find((r) => r.scopeURL.endsWith('/web/') && !r.isDeleted);
        if (reg) resolve(reg.registrationId);
      });
    });
    await cdp.send('ServiceWorker.enable');
    await page.evaluate(async () => {
      await navigator.serviceWorker.register('/web/sw.js', { scope: '/web/' });
      await navigator.serviceWorker.ready;
    });
    const registrationId = await registered;
    const shown = async (): Promise<Shown[]> => page.evaluate(async () => {
      const reg = await navigator.serviceWorker.getRegistration('/web/');
      return (await reg!.getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
    });

    const payload = { kind: 'message', model: 'ProjectTask', document: 7, message_id: 41, title: 'Ann Pusher', body: 'Ship it today', url: '/web#model=ProjectTask&id=7' };
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: served.baseUrl, registrationId, data: JSON.stringify(payload) });
    await expect.poll(shown, { timeout: 5_000 }).toHaveLength(1);
    expect((await shown())[0]).toEqual({ title: 'Ann Pusher', body: 'Ship it today', tag: 'message-41', data: { url: '/web#model=ProjectTask&id=7' } });

    await cdp.send('ServiceWorker.deliverPushMessage', { origin: served.baseUrl, registrationId, data: 'plain words' });
    await expect.poll(async () => (await shown()).map((n) => n.body), { timeout: 5_000 }).toContain('plain words');
    expect((await shown()).find((n) => n.body === 'plain words')).toMatchObject({ title: 'FieldForge', data: { url: '/web' } });
    g.assertClean();
  });

  it('a click on the notification closes it and opens the record in the tab of the client that is open', async () => {
    const { page, context } = g;
    const created = await t.api('POST', '/api/create/Company', { name: 'Clicked Carla Ltd' });
    expect(created.statusCode, created.body).toBe(200);
    const company = created.json().id as number;
    await signInContext(t, served, context, 'admin@example.com', 'admin-password-for-tests');
    await page.goto('/web/theme.css');
    await page.evaluate(async () => {
      await navigator.serviceWorker.register('/web/sw.js', { scope: '/web/' });
      await navigator.serviceWorker.ready;
    });
    // The worker claims the tab on activation: the click's handler finds it among its clients.
    await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
    const worker = context.serviceWorkers().find((w) => w.url().endsWith('/web/sw.js')) ?? await context.waitForEvent('serviceworker');
    // Headless Chromium has no notification to click: the worker is handed the click event the
    // browser would dispatch, on a notification it really shows.
    const left = await worker.evaluate(async (url) => {
      const scope = self as unknown as { registration: ServiceWorkerRegistration; dispatchEvent(e: Event): boolean };
      await scope.registration.showNotification('Ann Pusher', { body: 'Look at Carla Ltd', tag: 'click-me', data: { url } });
      const [shownOne] = await scope.registration.getNotifications({ tag: 'click-me' });
      const NotificationEventOf = (self as unknown as { NotificationEvent: new (type: string, init: { notification: Notification }) => Event }).NotificationEvent;
      scope.dispatchEvent(new NotificationEventOf('notificationclick', { notification: shownOne! }));
      return (await scope.registration.getNotifications({ tag: 'click-me' })).length;
    }, `/web#model=Company&id=${company}`);
    expect(left).toBe(0);
    await page.waitForURL((u) => u.pathname === '/web' && /action=/.test(u.hash) && u.hash.includes(`id=${company}`), { timeout: 10_000 });
    await expect.poll(() => page.getByRole('textbox', { name: 'Name' }).first().inputValue()).toBe('Clicked Carla Ltd');
  });
});
