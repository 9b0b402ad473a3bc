/**
 * The wizard dialog in Debian's Chromium (CONTRACTS C1 "Wizards", C2): a task's `Reassign tasks`
 * button opens a role=dialog built from `action-meta` (named by the wizard's title, its fields
 * labelled), checks the required field before sending anything, runs `execute` with the inputs
 * and the task as `active_ids`, closes on `X-Action-Close` and reloads the form behind on
 * `X-Action-Reload`; Escape cancels without running anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

async function create(model: string, vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', `/api/create/${model}`, vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

describe('the wizard dialog', () => {
  it('opens from the form by its title, checks required inputs first, runs execute, closes and reloads the form', async () => {
    const ann = await create('Contact', { name: 'Ann Assignee' });
    const bob = await create('Contact', { name: 'Bob Builder' });
    const task = await create('ProjectTask', { name: 'Paint the fence', assignee: ann, deadline: '2030-01-15' });
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
    const { page } = g;
    const executes: string[] = [];
    page.on('request', (r) => { if (r.url().includes('/api/execute/')) executes.push(r.url()); });
    await page.goto(`/web#action=project.action_project_tasks&view=form&id=${task}`);
    const assignee = page.getByLabel('Assignee', { exact: true });
    await expect.poll(() => assignee.inputValue(), { timeout: 20_000 }).toBe('Ann Assignee');

    // Escape cancels: nothing runs.
    await page.getByRole('button', { name: 'Reassign tasks' }).click();
    let dialog = page.getByRole('dialog', { name: 'Reassign tasks' });
    await dialog.getByLabel('Assign to').waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(executes).toEqual([]);

    await page.getByRole('button', { name: 'Reassign tasks' }).click();
    dialog = page.getByRole('dialog', { name: 'Reassign tasks' });
    const assignTo = dialog.getByLabel('Assign to');
    // The defaults of the selected task: its assignee and deadline.
    await expect.poll(() => assignTo.inputValue()).toBe('Ann Assignee');
    await assignTo.fill('');
    await assignTo.press('Tab');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => assignTo.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`[id="${await assignTo.getAttribute('aria-describedby')}"]`).textContent()).toMatch(/Assign to is required/);
    expect(executes).toEqual([]);

    await assignTo.fill('Bob');
    await dialog.getByRole('option', { name: 'Bob Builder' }).waitFor();
    await assignTo.press('Enter');
    expect(await assignTo.getAttribute('aria-invalid')).toBeNull();
    // A date the input cannot read is said at the field and stops the run (never the old value sent).
    const deadline = dialog.getByLabel('New deadline');
    const kept = await deadline.inputValue();
    await deadline.fill('2030-02-31');
    await deadline.press('Tab');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => deadline.getAttribute('aria-invalid')).toBe('true');
    const described = ((await deadline.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean);
    const messages = await Promise.all(described.map((id) => page.locator(`[id="${id}"]`).textContent()));
    expect(messages.join(' ')).toMatch(/Type a date/);
    expect(executes).toEqual([]);
    await deadline.fill(kept);
    await deadline.press('Tab');
    await expect.poll(() => deadline.getAttribute('aria-invalid')).toBeNull();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    // X-Action-Close: the dialog goes; X-Action-Reload: the form shows what the method wrote.
    await dialog.waitFor({ state: 'detached' });
    expect(executes).toEqual([expect.stringContaining('/api/execute/ProjectTask/action_reassign')]);
    await expect.poll(() => assignee.inputValue()).toBe('Bob Builder');
    const stored = (await t.api('POST', `/api/fetch/ProjectTask/${task}`, { fields: ['assignee', 'deadline'] })).json();
    expect(stored).toMatchObject({ assignee: { id: bob }, deadline: '2030-01-15' });
    g.assertClean();
    await g.close();
  });
});
