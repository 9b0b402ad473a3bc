/**
 * Reading by staying (spec §6.5 rule 5, §8 item 7, CONTRACTS C5 "Chatter") and record addresses
 * (C5 precision 10) in Debian's Chromium: a task's form opened from its shared address
 * `/web#action=…&id=N` (no view named) shows the task, and after it has stayed open the real 10
 * seconds the administrator's unread rows of that task — and only those — are read, with the badge
 * on the server's new count; a form left before 10 seconds marks nothing; `/web#model=…&id=N`
 * (the address the bell and push notifications use) opens the record's form through the model's
 * action, and says so when no action opens that model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { badge, livePage, messagingWorld, post, serverCount, taskFollowedBy, TASKS, type MessagingWorld } from './messaging-steps.js';

let w: MessagingWorld;

beforeAll(async () => {
  w = await messagingWorld();
}, 90_000);
afterAll(async () => {
  await w?.close();
});

describe('reading by staying on a record', () => {
  it('marks the record’s unread rows read once its form has stayed open 10 s, and the badge follows', async () => {
    const here = await taskFollowedBy(w.bob, 'Dwell here', [w.admin]);
    const elsewhere = await taskFollowedBy(w.bob, 'Dwell elsewhere', [w.admin]);
    await post(w.bob, here, { content: 'one' });
    await post(w.bob, here, { content: 'two' });
    await post(w.bob, elsewhere, { content: 'three' });
    expect(await serverCount(w.admin)).toBe(3);

    const g = await livePage(w, w.admin, `action=${TASKS}&id=${here}`, { label: 'Name' });
    const { page } = g;
    const reads: string[] = [];
    page.on('request', (r) => { if (r.url().endsWith('/api/activity-stream/read')) reads.push(r.postData() ?? ''); });
    // The shared address named no view: it is the task's form.
    expect(await page.getByLabel('Name', { exact: true }).first().inputValue()).toBe('Dwell here');
    await expect.poll(() => badge(page)).toBe('3');

    // Times in the page's own clock, from the chatter's first read of the thread (the form's
    // read of the record comes before it): a busy machine may take seconds to open the page.
    const fetches = (id: number) => page.evaluate((n) => performance.getEntriesByType('resource')
      .filter((e) => e.name.endsWith(`/api/fetch/ProjectTask/${n}`)).map((e) => e.startTime), id);
    await expect.poll(async () => (await fetches(here)).length).toBeGreaterThanOrEqual(2);
    const threadRead = (await fetches(here))[1]!;
    await page.waitForFunction((t) => performance.now() >= t + 8_000, threadRead, { timeout: 20_000, polling: 100 });
    expect(reads).toEqual([]);
    expect(await serverCount(w.admin)).toBe(3);

    await expect.poll(() => serverCount(w.admin), { timeout: 10_000, interval: 250 }).toBe(1);
    expect(reads.map((b) => JSON.parse(b))).toEqual([{ model: 'ProjectTask', document: here }]);
    const marked = await page.evaluate(() => performance.getEntriesByType('resource').find((e) => e.name.endsWith('/api/activity-stream/read'))!.startTime);
    expect(marked - threadRead).toBeGreaterThanOrEqual(9_900);
    expect(marked - threadRead).toBeLessThan(11_500);
    await expect.poll(() => badge(page)).toBe('1');
    g.assertClean();
    await g.close();
  });

  it('marks nothing when the form is left before 10 s', async () => {
    const task = await taskFollowedBy(w.bob, 'Left early', [w.admin]);
    await w.admin.call('POST', '/api/activity-stream/read', { all: true });
    await post(w.bob, task, { content: 'unread for now' });
    const g = await livePage(w, w.admin, `action=${TASKS}&view=form&id=${task}`, { label: 'Name' });
    const { page } = g;
    await page.waitForTimeout(2_000);
    await page.evaluate(() => { location.hash = ''; });
    await expect.poll(() => page.getByRole('region', { name: 'Chatter' }).count()).toBe(0);
    await page.waitForTimeout(10_000);
    expect(await serverCount(w.admin)).toBe(1);
    expect(await badge(page)).toBe('1');
    g.assertClean();
    await g.close();
  });
});

describe('record addresses', () => {
  it('#model=…&id=… opens the record’s form through the model’s action, replacing the address', async () => {
    const task = await taskFollowedBy(w.bob, 'Addressed task');
    const g = await livePage(w, w.admin, `model=ProjectTask&id=${task}`, { label: 'Name' });
    const { page } = g;
    expect(await page.getByLabel('Name', { exact: true }).first().inputValue()).toBe('Addressed task');
    expect(await page.evaluate(() => location.hash)).toBe(`#action=${TASKS}&view=form&id=${task}`);

    await page.evaluate(() => { location.hash = '#model=NoSuchModel&id=3'; });
    const alert = page.getByRole('alert').filter({ hasText: 'This record cannot be opened' });
    await alert.waitFor();
    g.assertClean();
    await g.close();
  });
});
