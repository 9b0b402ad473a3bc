/**
 * The service worker's side of a subscription renewal (web/sw.js, issue 27 item 5), in Debian's
 * Chromium, in a browser with no session at all — as when the browser renews the subscription days
 * after the person last signed in (odoo PR #275954): the page hands the worker the renewal token
 * (`ff:push-renewal`), and the worker's renewal re-points the server's row at the renewed
 * subscription with that token alone, in the database the token belongs to; without a session it
 * subscribes again with the key it was given. (Chromium cannot fire a trusted
 * `pushsubscriptionchange` nor subscribe without a push service: the handler's two steps are
 * called in the worker instead.)
 */
import type { Browser, Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { PushSubscription } from '../../modules/messaging/models/push_subscription.js';
import { openSession } from '../../src/auth/sessions.js';
import { guardedPage, launchBrowser, serveApp, type GuardedPage, type ServedApp } from '../support/browser.js';
import { PushEndpoint } from '../support/push-endpoint.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let push: PushEndpoint;
let served: ServedApp;
let browser: Browser;
let g: GuardedPage;

beforeAll(async () => {
  push = await PushEndpoint.start();
  process.env.FF_PUSH_ALLOWED_ORIGINS = push.origin;
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  // No `db` option: nothing adds X-DB-NAME to the worker's requests but the worker itself.
  g = await guardedPage(browser, served.baseUrl);
});
afterAll(async () => {
  delete process.env.FF_PUSH_ALLOWED_ORIGINS;
  await g?.close();
  await browser?.close();
  await served?.close();
  await t?.close();
  await push?.stop();
});

async function registeredWorker(): Promise<Worker> {
  const { page, context } = g;
  await page.goto('/web/theme.css');
  const appeared = context.serviceWorkers()[0] ?? context.waitForEvent('serviceworker');
  await page.evaluate(async () => {
    await navigator.serviceWorker.register('/web/sw.js', { scope: '/web/' });
    await navigator.serviceWorker.ready;
  });
  return appeared;
}

describe('/web/sw.js renewing a subscription', () => {
  it('re-points the row with the renewal token alone (no session, the database named by the token), and subscribes again with the key it was given', async () => {
    const uid = await t.run(async () => {
      const groups = await Group.query({ identifier__in: ['core.group_user'] }).ids();
      return (await User.create({ name: 'Worker Renewal', email: 'worker-renewal@push.test', groups })).id;
    });
    const session = await t.run(() => openSession(uid, { dbName: t.name, secret: t.platform.secret, sessionHours: 8 }));
    const before = push.subscription('sw-before');
    const subscribed = await t.api('POST', '/api/push/subscribe', { subscription: before }, { authorization: `Bearer ${session.access_token}` });
    expect(subscribed.statusCode, subscribed.body).toBe(200);
    const { renewal_token, database } = subscribed.json();
    const givenKey = webpush.generateVAPIDKeys().publicKey; // not the database's: which key the worker took shows

    const worker = await registeredWorker();
    const kept = await g.page.evaluate(async (renewal) => {
      const reg = await navigator.serviceWorker.ready;
      return new Promise<boolean>((resolve) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = (event) => resolve(event.data === true);
        reg.active!.postMessage({ type: 'ff:push-renewal', renewal }, [channel.port2]);
      });
    }, { database, renewal_token, public_key: givenKey });
    expect(kept).toBe(true);
    expect(await g.context.cookies()).toEqual([]);

    // The browser's renewed subscription, handed to the worker's renewal.
    const after = push.subscription('sw-after');
    const renewed = await worker.evaluate(async (sub) => {
      const fn = (globalThis as unknown as { renewSubscription(s: unknown, old: string | null): Promise<boolean> }).renewSubscription;
      return fn({ endpoint: sub.endpoint, toJSON: () => sub }, null);
    }, after);
    expect(renewed).toBe(true);
    expect(await t.run(async () => (await PushSubscription.query({ user: uid }).read(['endpoint'])).map((r) => r.endpoint))).toEqual([after.endpoint]);

    // No session: `/api/push/key` refuses the worker, which subscribes again with the key it was given.
    const key = await worker.evaluate(async () => {
      const scope = globalThis as unknown as { currentKey(saved: unknown, old: unknown): Promise<Uint8Array>; readRenewal(): Promise<unknown> };
      const bytes = new Uint8Array(await scope.currentKey(await scope.readRenewal(), null));
      return btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    });
    expect(key).toBe(givenKey);
    g.assertClean();
  });
});
