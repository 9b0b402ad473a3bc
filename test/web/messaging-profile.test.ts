/**
 * My profile's `Notifications` section (CONTRACTS C5 precision 3) in Debian's Chromium: the
 * preference is a radio group labelled `Notification preference`, saved with
 * `User.set_my_notification_preference` and shown again after a reload; with `inbox`, Bob's
 * message reaches the feed and the badge but no toast, and back on `realtime` it is a toast again; the push opt-in offers `Enable push
 * notifications` in a browser that has push; axe finds nothing serious; nothing scrolls sideways
 * at 360 px.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { User } from '../../modules/core/models/index.js';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { badge, livePage, messagingWorld, post, serverCount, taskFollowedBy, type MessagingWorld } from './messaging-steps.js';

let w: MessagingWorld;

beforeAll(async () => {
  w = await messagingWorld();
}, 90_000);
afterAll(async () => {
  await w?.close();
});

const preferenceOf = (uid: number) => w.t.run(async () => (await User.query().filter({ id: uid }).read(['notification_preference']))[0]!.notification_preference);

describe('My profile: notifications', () => {
  it('saves the preference; with “Only in the inbox” a message reaches the feed and the badge, and no toast', async () => {
    const g = await livePage(w, w.admin, 'action=core.action_profile', { width: 360 });
    const { page } = g;
    const group = page.getByRole('radiogroup', { name: 'Notification preference' });
    await group.waitFor();
    const realtime = group.getByLabel('In the app and as push notifications');
    const inbox = group.getByLabel('Only in the inbox');
    await expect.poll(() => realtime.isChecked()).toBe(true);
    const save = page.getByRole('button', { name: 'Save notification preference' });
    expect(await save.isDisabled()).toBe(true);
    const findings = await seriousViolations(page);
    expect(findings, describeFindings(findings)).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);

    await inbox.check();
    await save.click();
    await page.getByRole('status').filter({ hasText: 'Notification preference saved.' }).waitFor();
    expect(await preferenceOf(w.admin.uid)).toBe('inbox');
    await page.reload();
    await expect.poll(() => page.getByRole('radiogroup', { name: 'Notification preference' }).getByLabel('Only in the inbox').isChecked()).toBe(true);

    // Inbox only: the row is there and the badge counts it, but nothing pops up.
    await expect.poll(() => g.received.filter((f) => f.data?.event === 'hello').length, { timeout: 15_000 }).toBe(2);
    const task = await taskFollowedBy(w.bob, 'Quiet task', [w.admin]);
    const before = await serverCount(w.admin);
    await post(w.bob, task, { content: 'For your inbox only' });
    expect(await serverCount(w.admin)).toBe(before + 1);
    await page.waitForTimeout(2_500);
    expect(await page.getByRole('status').filter({ hasText: 'For your inbox only' }).count()).toBe(0);
    await page.reload();
    await expect.poll(() => badge(page)).toBe(String(before + 1));

    // Back on realtime (saved in this page): the next message is a toast again.
    const group2 = page.getByRole('radiogroup', { name: 'Notification preference' });
    // The saved choice is shown once read, and nothing is checked before it is.
    await expect.poll(() => group2.getByLabel('Only in the inbox').isChecked()).toBe(true);
    expect(await group2.getByLabel('In the app and as push notifications').isChecked()).toBe(false);
    await group2.getByLabel('In the app and as push notifications').check();
    await page.getByRole('button', { name: 'Save notification preference' }).click();
    await expect.poll(() => preferenceOf(w.admin.uid)).toBe('realtime');
    await post(w.bob, task, { content: 'Back to live toasts' });
    await page.getByRole('status').filter({ hasText: 'Back to live toasts' }).waitFor({ timeout: 8_000 });

    g.assertClean();
    await g.close();
  });

  it('offers this browser’s push opt-in, and says the browser’s reason when it cannot subscribe', async () => {
    const g = await livePage(w, w.bob, 'action=core.action_profile');
    const { page } = g;
    const enable = page.getByRole('button', { name: 'Enable push notifications' });
    await enable.waitFor();
    expect(await page.getByText('This browser does not receive push notifications.').count()).toBe(1);
    // Headless Chromium has no push service to register with: the failure is said, not swallowed.
    await enable.click();
    const section = page.getByRole('region', { name: 'Notifications' }).or(page.locator('section', { has: page.getByRole('heading', { name: 'Notifications' }) }));
    await section.getByRole('alert').first().waitFor({ timeout: 20_000 });
    expect(await page.getByRole('button', { name: 'Enable push notifications' }).count()).toBe(1);
    g.assertClean();
    await g.close();
  });
});
