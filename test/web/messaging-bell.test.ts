/**
 * The bell (CONTRACTS C5 "Bell", spec §4.10, §6.5 rule 5) in Debian's Chromium through the shell,
 * with the real socket: the badge is seeded from the server, bumped live by a message Bob posts
 * from his own session on a task the administrator follows, and a toast names him with the text;
 * the panel (a dialog named Notifications) lists the feed newest first with author, record link,
 * body and time; `Mark as read` and `Mark all as read` leave the badge on the server's count;
 * `Load more` pages by `before_id`; Escape closes and gives the focus back to the bell; the record
 * link opens the task's form; a reconnect reads the count again (rows linked without a push are
 * counted once the socket comes back); axe finds nothing serious with the panel open; at 360 px
 * the panel fits the screen.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FkMessageNotifiedContact } from '../../modules/messaging/models/fk_message_notified_contact.js';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { badge, bellButton, livePage, messagingWorld, post, serverCount, taskFollowedBy, TASKS, type MessagingWorld } from './messaging-steps.js';

let w: MessagingWorld;

beforeAll(async () => {
  w = await messagingWorld();
}, 90_000);
afterAll(async () => {
  await w?.close();
});

const panel = (page: import('playwright-core').Page) => page.getByRole('dialog', { name: 'Notifications' });

describe('the bell', () => {
  it('bumps live on Bob’s message with a toast naming him; the panel lists it; Mark as read and Mark all as read follow the server’s count; Escape gives the focus back', async () => {
    const task = await taskFollowedBy(w.bob, 'Paint the fence', [w.admin]);
    await post(w.bob, task, { content: '<p>First coat is on.</p>' });
    const g = await livePage(w, w.admin, '');
    const { page } = g;
    // Seeded from the server.
    await expect.poll(() => badge(page)).toBe('1');
    expect(await bellButton(page).getAttribute('aria-describedby')).toBeTruthy();

    // Bob posts from his session: the badge moves without a reload, and a toast says who and what.
    await post(w.bob, task, { content: '<p>Second coat <b>tomorrow</b> &amp; then the gate.</p>' });
    await expect.poll(() => badge(page), { timeout: 8_000 }).toBe('2');
    const toast = page.getByRole('status').filter({ hasText: 'Second coat tomorrow & then the gate.' });
    await toast.waitFor();
    expect(await toast.locator('.ff-toast__title').innerText()).toBe('Bob Builder');
    expect(g.received.filter((f) => f.type === 'activity_update' && f.data.kind === 'message')).toHaveLength(1);

    // The panel: newest first, author, record link, body, time.
    await bellButton(page).click();
    const dialog = panel(page);
    await dialog.waitFor();
    expect(await bellButton(page).getAttribute('aria-expanded')).toBe('true');
    const items = dialog.getByRole('listitem');
    await expect.poll(() => items.count()).toBe(2);
    expect(await items.nth(0).innerText()).toMatch(/Bob Builder[\s\S]*Paint the fence[\s\S]*Second coat tomorrow & then the gate\./);
    expect(await items.nth(1).innerText()).toMatch(/First coat is on\./);
    expect(await items.nth(0).getByRole('link', { name: 'Paint the fence' }).getAttribute('href')).toBe(`#model=ProjectTask&id=${task}`);
    expect(await items.nth(0).locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    const findings = await seriousViolations(page);
    expect(findings, describeFindings(findings)).toEqual([]);

    // One item read by hand: the badge shows what the server now counts.
    await items.nth(1).getByRole('button', { name: 'Mark as read', exact: true }).click();
    await expect.poll(() => items.nth(1).getByRole('button', { name: 'Mark as read' }).count()).toBe(0);
    expect(await serverCount(w.admin)).toBe(1);
    await expect.poll(() => badge(page)).toBe('1');
    // All of them.
    await dialog.getByRole('button', { name: 'Mark all as read', exact: true }).click();
    await expect.poll(() => badge(page)).toBe('');
    expect(await serverCount(w.admin)).toBe(0);
    expect(await dialog.getByRole('button', { name: 'Mark as read', exact: true }).count()).toBe(0);

    // Keyboard: Escape closes the panel and the focus is back on the bell.
    await dialog.getByRole('button', { name: 'Mark all as read' }).focus();
    await page.keyboard.press('Escape');
    await expect.poll(() => panel(page).count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Notifications');
    // And Enter on the bell opens it again.
    await page.keyboard.press('Enter');
    await panel(page).waitFor();
    g.assertClean();
    await g.close();
  });

  it('the record link opens the task’s form, and the panel closes', async () => {
    const task = await taskFollowedBy(w.bob, 'Fix the gutter', [w.admin]);
    await post(w.bob, task, { content: 'The left gutter leaks.' });
    const g = await livePage(w, w.admin, '');
    const { page } = g;
    await bellButton(page).click();
    await panel(page).getByRole('link', { name: 'Fix the gutter' }).first().click();
    await expect.poll(() => page.evaluate(() => location.hash)).toMatch(new RegExp(`^#action=${TASKS.replace('.', '\\.')}&view=form&id=${task}$`));
    await expect.poll(() => page.getByLabel('Name', { exact: true }).first().inputValue()).toBe('Fix the gutter');
    expect(await panel(page).count()).toBe(0);
    g.assertClean();
    await g.close();
  });

  it('pages the feed with Load more (before_id), 30 at a time', async () => {
    const task = await taskFollowedBy(w.bob, 'Many messages', [w.admin]);
    await w.admin.call('POST', '/api/activity-stream/read', { all: true });
    for (let i = 1; i <= 33; i++) await post(w.bob, task, { content: `Update number ${i}` });
    const g = await livePage(w, w.admin, '');
    const { page } = g;
    await expect.poll(() => badge(page)).toBe('33');
    await bellButton(page).click();
    const items = panel(page).getByRole('listitem');
    await expect.poll(() => items.count()).toBe(30);
    expect(await items.nth(0).innerText()).toContain('Update number 33');
    expect(await items.nth(29).innerText()).toContain('Update number 4');
    const requests: string[] = [];
    page.on('request', (r) => { if (r.url().endsWith('/api/activity-stream')) requests.push(r.postData() ?? ''); });
    await panel(page).getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => items.count()).toBeGreaterThanOrEqual(33);
    expect(await items.nth(32).innerText()).toContain('Update number 1');
    expect(JSON.parse(requests[0]!)).toMatchObject({ limit: 30, before_id: expect.any(Number) });
    await expect.poll(() => panel(page).getByRole('button', { name: 'Load more' }).count()).toBe(0);
    g.assertClean();
    await g.close();
  });

  it('reads the count again when the socket reconnects, so rows linked without a push are counted', async () => {
    await w.admin.call('POST', '/api/activity-stream/read', { all: true });
    const task = await taskFollowedBy(w.bob, 'Quiet rows', [w.admin]);
    const g = await livePage(w, w.admin, `action=${TASKS}&view=form&id=${task}`, { label: 'Name' });
    const { page } = g;
    await expect.poll(() => w.served.app.realtime.watchersOf(w.t.name, 'ProjectTask', task).size).toBe(1);
    expect(await badge(page)).toBe('');
    // The rows change behind the page's back (no frame tells it): the badge stays as it was…
    const message = await post(w.bob, task, { content: 'seen by the socket' });
    await expect.poll(() => badge(page), { timeout: 8_000 }).toBe('1');
    await page.waitForTimeout(2_500); // the bump's own settling read is done
    await w.t.run(async () => {
      await FkMessageNotifiedContact.query({ message }).update({ read: true });
    });
    expect(await serverCount(w.admin)).toBe(0);
    await page.waitForTimeout(2_500);
    expect(await badge(page)).toBe('1');
    // …until the socket comes back after a drop: then it reads the server's count.
    for (const client of w.served.app.realtime.watchersOf(w.t.name, 'ProjectTask', task)) client.close(1012, 'Service restart');
    await expect.poll(() => g.received.filter((f) => f.data?.event === 'hello').length, { timeout: 8_000 }).toBe(2);
    await expect.poll(() => badge(page)).toBe('');
    g.assertClean();
    await g.close();
  });

  it('fits a 360 px screen in the dark theme: the panel within the screen, nothing scrolls sideways', async () => {
    const task = await taskFollowedBy(w.bob, 'A task with a rather long name that has to wrap on a narrow phone screen', [w.admin]);
    await post(w.bob, task, { content: 'A long message body that should wrap nicely rather than push the page sideways on a small phone screen.' });
    const g = await livePage(w, w.admin, '', { width: 360, dark: true });
    const { page } = g;
    await bellButton(page).click();
    const dialog = panel(page);
    await dialog.getByRole('listitem').first().waitFor();
    const box = (await dialog.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(360);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    const findings = await seriousViolations(page);
    expect(findings, describeFindings(findings)).toEqual([]);
    g.assertClean();
    await g.close();
  });
});
