/**
 * The project module end to end in Debian's Chromium (issue 12 item 9): Project > Tasks, New →
 * a task in a project created from the autocomplete, assigned, with a deadline → Save; the
 * statusbar moves it New → In Progress → Review → Done, each click stored at once; a sub-task's
 * parent fills its project (ui-effect); the "Reassign tasks" wizard gives it to someone else; the
 * list shows where everything ended. Each step is checked against the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { hashId, pick, readRecord } from './form-steps.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  for (const name of ['Margaret Peacock', 'Steven Buchanan']) {
    const res = await t.api('POST', '/api/create/Contact', { name });
    expect(res.statusCode, res.body).toBe(200);
  }
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

async function signedIn(): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  await g.page.goto('/web');
  await g.page.getByRole('navigation', { name: 'Main menu' }).waitFor();
  return g;
}

const read = (model: string, id: number, fields: string[]) => readRecord(t, model, id, fields);

const stageName = async (id: number) => (await read('ProjectTask', id, ['stage'])).stage?.display_name ?? null;

describe('project tasks in the browser', () => {
  it('creates a task, moves it through the statusbar, files a sub-task by its parent, reassigns it with the wizard', async () => {
    const g = await signedIn();
    const { page } = g;
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Tasks' }).click();
    await page.waitForURL(/#action=project\.action_project_tasks/);
    await page.getByRole('table').waitFor();
    await page.getByRole('button', { name: 'New' }).click();

    await page.getByLabel('Name', { exact: true }).fill('Draft the launch plan');
    await pick(page, 'Project', 'Website relaunch', 'Create "Website relaunch"');
    await pick(page, 'Assignee', 'peacock', 'Margaret Peacock');
    const deadline = page.getByLabel('Deadline');
    await deadline.fill('2030-05-17');
    await deadline.blur();
    await page.getByRole('radiogroup', { name: 'Priority' }).getByRole('radio', { name: 'Important' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    const task = await hashId(page);
    const saved = await read('ProjectTask', task, ['name', 'project', 'assignee', 'deadline', 'priority']);
    expect(saved).toMatchObject({ name: 'Draft the launch plan', project: { display_name: 'Website relaunch' }, assignee: { display_name: 'Margaret Peacock' }, deadline: '2030-05-17', priority: '1' });

    // The pipeline: each click stores the stage at once and marks it as the current step.
    const bar = page.getByRole('group', { name: 'Stage' });
    await expect.poll(() => bar.getByRole('button').count()).toBeGreaterThanOrEqual(4);
    expect(await bar.getByRole('button').allTextContents()).toEqual(['New', 'In Progress', 'Review', 'Done']);
    for (const step of ['In Progress', 'Review', 'Done']) {
      await bar.getByRole('button', { name: step }).click();
      await expect.poll(() => stageName(task)).toBe(step);
      await expect.poll(() => bar.getByRole('button', { name: step }).getAttribute('aria-current')).toBe('step');
    }
    expect(await page.getByRole('button', { name: 'Discard' }).isDisabled()).toBe(true);

    // A sub-task: choosing its parent files it in the parent's project before anything is saved.
    // (The stage "New" is a button too: the record's New is in the Record group.)
    await page.getByRole('group', { name: 'Record' }).getByRole('button', { name: 'New' }).click();
    await page.waitForFunction(() => !/[#&]id=/.test(location.hash));
    await page.getByLabel('Name', { exact: true }).fill('Book the venue');
    await pick(page, 'Parent task', 'launch plan', 'Draft the launch plan');
    await expect.poll(() => page.getByRole('combobox', { name: 'Project' }).inputValue()).toBe('Website relaunch');
    await page.getByRole('button', { name: 'Save' }).click();
    const subtask = await hashId(page);
    expect(await read('ProjectTask', subtask, ['parent', 'project'])).toMatchObject({ parent: { id: task }, project: { display_name: 'Website relaunch' } });

    // The wizard, from the form: a dialog named by its title, Confirm runs it, the form reloads.
    await page.getByRole('button', { name: 'Reassign tasks' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reassign tasks' });
    await dialog.waitFor();
    await pick(dialog, 'Assign to', 'buchanan', 'Steven Buchanan');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(async () => (await read('ProjectTask', subtask, ['assignee'])).assignee?.display_name).toBe('Steven Buchanan');
    await expect.poll(() => page.getByRole('combobox', { name: 'Assignee' }).inputValue()).toBe('Steven Buchanan');

    // The list: both tasks, with their stage and assignee.
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Tasks' }).click();
    const rows = page.getByRole('table').locator('tbody tr[data-id]');
    await expect.poll(() => rows.count()).toBe(2);
    const first = rows.filter({ hasText: 'Draft the launch plan' });
    expect(await first.innerText()).toMatch(/Website relaunch[\s\S]*Done[\s\S]*Margaret Peacock/);
    expect(await rows.filter({ hasText: 'Book the venue' }).innerText()).toContain('Steven Buchanan');
    g.assertClean();
    await g.close();
  });
});
