/**
 * The chatter (CONTRACTS C5 "Chatter") on a project task's form in Debian's Chromium, with the real
 * socket: `Send message` posts a public comment and `Log note` an internal note (their `message_type`
 * on the server), shown newest first, one article each with author, time and the sanitised HTML
 * content; Bob, with the same task open in his own browser, sees each new message appear without a
 * reload — as a follower (`message`) and, once he unfollows, as a mere viewer (`record_message`);
 * `@` completes contacts through `name_search` and the note notifies the one mentioned only;
 * `Followers` shows the count and the names, `Follow` / `Unfollow` change them; a refused post
 * keeps the text and says the server's reason; axe finds nothing serious; at 360 px nothing
 * scrolls sideways.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createUserWithPassword } from '../support/browser.js';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { chatter, livePage, messagingWorld, ok, personOf, post, serverCount, taskFollowedBy, TASKS, type MessagingWorld, type Person } from './messaging-steps.js';

let w: MessagingWorld;

beforeAll(async () => {
  w = await messagingWorld();
}, 90_000);
afterAll(async () => {
  await w?.close();
});

const formOf = (task: number) => `action=${TASKS}&view=form&id=${task}`;

/** The task's thread and followers as the server answers them (the administrator's API key). */
async function thread(task: number): Promise<{ messages: any[]; followers: any[] }> {
  const res = await w.t.api('POST', `/api/fetch/ProjectTask/${task}`, { fields: ['messages', 'followers'] });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Writes in the composer and sends, as a person would. */
async function write(page: Page, mode: 'Send message' | 'Log note', text: string): Promise<void> {
  const region = chatter(page);
  await region.getByRole('button', { name: mode, exact: true }).click();
  await region.getByLabel('Message', { exact: true }).fill(text);
  await region.getByRole('button', { name: 'Send', exact: true }).click();
}

const articles = (page: Page) => chatter(page).getByRole('article');

describe('the chatter', () => {
  it('posts a message and a note, newest first; Bob’s open form shows each live, as a follower and then as a viewer', async () => {
    const task = await taskFollowedBy(w.bob, 'Chatter task');
    const mine = await livePage(w, w.admin, formOf(task), { label: 'Name' });
    const bobs = await livePage(w, w.bob, formOf(task), { label: 'Name' });
    await chatter(mine.page).waitFor();
    expect(await chatter(mine.page).getByText('No messages yet.').count()).toBe(1);
    const findings = await seriousViolations(mine.page);
    expect(findings, describeFindings(findings)).toEqual([]);

    await write(mine.page, 'Send message', 'Hello Bob,\nthe paint has arrived.');
    await expect.poll(() => articles(mine.page).count()).toBe(1);
    // The composer is empty again; the message is in Bob's form without a reload (he follows the task).
    expect(await chatter(mine.page).getByLabel('Message', { exact: true }).inputValue()).toBe('');
    await expect.poll(() => articles(bobs.page).count(), { timeout: 8_000 }).toBe(1);
    expect(await articles(bobs.page).first().innerText()).toMatch(/Administrator[\s\S]*Hello Bob,\s*the paint has arrived\./);
    expect(bobs.received.some((f) => f.type === 'activity_update' && f.data.kind === 'message' && f.data.document === task)).toBe(true);

    await write(mine.page, 'Log note', 'Internal: the supplier was late.');
    await expect.poll(() => articles(mine.page).count()).toBe(2);
    const first = articles(mine.page).first();
    expect(await first.innerText()).toMatch(/Note[\s\S]*Internal: the supplier was late\./);
    expect(await first.locator('time').getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
    const { messages } = await thread(task);
    expect(messages.map((m) => m.message_type)).toEqual(['note', 'comment']);
    expect(messages[1].content).toContain('the paint has arrived.');
    // A note notifies nobody but those it mentions: Bob's thread still learns of it (he watches the record).
    await expect.poll(() => articles(bobs.page).count(), { timeout: 8_000 }).toBe(2);

    // Bob stops following; he still watches the form, so the next message reaches it as record_message.
    await chatter(bobs.page).getByRole('button', { name: 'Unfollow', exact: true }).click();
    await chatter(bobs.page).getByRole('button', { name: 'Follow', exact: true }).waitFor();
    await write(mine.page, 'Send message', 'Anyone still here?');
    await expect.poll(() => articles(bobs.page).count(), { timeout: 8_000 }).toBe(3);
    expect(bobs.received.some((f) => f.type === 'activity_update' && f.data.kind === 'record_message' && f.data.document === task)).toBe(true);
    expect(await articles(bobs.page).first().innerText()).toContain('Anyone still here?');
    mine.assertClean();
    bobs.assertClean();
    await mine.close();
    await bobs.close();
  });

  it('shows the content as sanitised HTML: markup rendered, scripts and handlers gone', async () => {
    const task = await taskFollowedBy(w.bob, 'Markup task');
    await post(w.bob, task, { content: '<p>Plain <b>bold</b> <a href="javascript:alert(1)">bad link</a><img src="x" onerror="window.__pwned = 1"><script>window.__pwned = 2</script></p>' });
    const g = await livePage(w, w.admin, formOf(task), { label: 'Name' });
    const article = articles(g.page).first();
    await article.waitFor();
    expect(await article.locator('b').innerText()).toBe('bold');
    expect(await article.locator('script, [onerror]').count()).toBe(0);
    expect(await article.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await g.page.evaluate(() => (window as { __pwned?: number }).__pwned ?? null)).toBeNull();
    g.assertClean();
    await g.close();
  });

  it('completes @ mentions through name_search on Contact; the note notifies the one mentioned and no follower', async () => {
    const carolUid = await createUserWithPassword(w.t, { name: 'Carol Mention', email: 'carol.mention@example.test', password: 'carol-password-for-tests', groups: ['core.group_user', 'project.group_project_user'] });
    const task = await taskFollowedBy(w.bob, 'Mention task');
    const bobBefore = await serverCount(w.bob);
    const g = await livePage(w, w.admin, formOf(task), { label: 'Name' });
    const { page } = g;
    const searches: string[] = [];
    page.on('request', (r) => { if (r.url().includes('/api/name_search/Contact')) searches.push(r.postData() ?? ''); });
    const box = chatter(page).getByLabel('Message', { exact: true });
    await chatter(page).getByRole('button', { name: 'Log note', exact: true }).click();
    await box.click();
    await page.keyboard.type('Please check this, @Caro');
    const list = page.getByRole('listbox', { name: 'Contacts to mention' });
    await list.getByRole('option', { name: 'Carol Mention' }).waitFor();
    expect(JSON.parse(searches.at(-1)!)).toMatchObject({ term: 'Caro' });
    expect(await box.getAttribute('aria-activedescendant')).toBeTruthy();
    const findings = await seriousViolations(page, { include: '.ff-chatter' });
    expect(findings, describeFindings(findings)).toEqual([]);
    // Keyboard: the first option is active; Enter picks it.
    await page.keyboard.press('Enter');
    await expect.poll(() => box.inputValue()).toBe('Please check this, @Carol Mention ');
    expect(await list.isHidden()).toBe(true);
    await page.keyboard.type('before Friday.');
    await chatter(page).getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => articles(page).count()).toBe(1);
    expect(await articles(page).first().innerText()).toContain('@Carol Mention before Friday.');

    const carol = await personOf(w, carolUid, 'carol.mention@example.test', 'carol-password-for-tests');
    await expect.poll(() => serverCount(carol)).toBe(1);
    const [item] = await ok<any[]>(carol.call('POST', '/api/activity-stream', {}));
    expect(item).toMatchObject({ model: 'ProjectTask', document: task, message_type: 'note', body: 'Please check this, @Carol Mention before Friday.' });
    // Bob follows the task, but a note is internal: it did not notify him.
    expect(await serverCount(w.bob)).toBe(bobBefore);
    // Escape closes an open list without leaving the composer.
    await box.fill('');
    await box.click();
    await page.keyboard.type('@Caro');
    await list.getByRole('option', { name: 'Carol Mention' }).waitFor();
    await page.keyboard.press('Escape');
    expect(await list.isHidden()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('TEXTAREA');
    g.assertClean();
    await g.close();
  });

  it('shows the followers with their count; Follow and Unfollow change them for the person signed in', async () => {
    const task = await taskFollowedBy(w.bob, 'Follow task');
    const g = await livePage(w, w.admin, formOf(task), { label: 'Name' });
    const region = chatter(g.page);
    const followersButton = region.getByRole('button', { name: /^Followers \d+$/ });
    await expect.poll(() => followersButton.innerText()).toMatch(/Followers\s*1/);
    await followersButton.click();
    expect(await followersButton.getAttribute('aria-expanded')).toBe('true');
    const names = region.getByRole('list', { name: 'Followers' });
    expect(await names.innerText()).toContain('Bob Builder');

    await region.getByRole('button', { name: 'Follow', exact: true }).click();
    await region.getByRole('button', { name: 'Unfollow', exact: true }).waitFor();
    await expect.poll(() => followersButton.innerText()).toMatch(/Followers\s*2/);
    expect(await names.innerText()).toMatch(/Administrator \(you\)/);
    expect((await thread(task)).followers.map((f) => f.user_id).sort()).toEqual([w.admin.uid, w.bob.uid].sort());

    await region.getByRole('button', { name: 'Unfollow', exact: true }).click();
    await region.getByRole('button', { name: 'Follow', exact: true }).waitFor();
    await expect.poll(() => followersButton.innerText()).toMatch(/Followers\s*1/);
    expect((await thread(task)).followers.map((f) => f.user_id)).toEqual([w.bob.uid]);
    g.assertClean();
    await g.close();
  });

  it('keeps the text and says the server’s reason when a post is refused', async () => {
    const task = await taskFollowedBy(w.bob, 'Refusal task');
    const g = await livePage(w, w.admin, formOf(task), { label: 'Name' });
    const region = chatter(g.page);
    const long = 'x'.repeat(100_001);
    await region.getByLabel('Message', { exact: true }).fill(long);
    await region.getByRole('button', { name: 'Send', exact: true }).click();
    const alert = region.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/content is longer than 100000 characters/);
    expect(await region.getByLabel('Message', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect((await region.getByLabel('Message', { exact: true }).inputValue()).length).toBe(100_001);
    expect((await thread(task)).messages).toEqual([]);
    g.assertClean();
    await g.close();
  });

  it('fits a 360 px screen with the chatter under the form, in the dark theme too', async () => {
    const task = await taskFollowedBy(w.bob, 'Narrow task');
    await post(w.bob, task, { content: '<p>A fairly long message that must wrap within the narrow screen rather than widen the page: averyveryverylongwordwithoutanybreakopportunityatall.</p>' });
    const g = await livePage(w, w.admin, formOf(task), { label: 'Name', width: 360, dark: true });
    await articles(g.page).first().waitFor();
    const box = (await chatter(g.page).boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(360);
    expect(await g.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    for (const name of ['Send message', 'Log note', 'Send', 'Follow']) {
      const b = (await chatter(g.page).getByRole('button', { name, exact: true }).boundingBox())!;
      expect(b.x + b.width, name).toBeLessThanOrEqual(360);
    }
    const findings = await seriousViolations(g.page);
    expect(findings, describeFindings(findings)).toEqual([]);
    g.assertClean();
    await g.close();
  });
});
