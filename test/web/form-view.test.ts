/**
 * The form view in Debian's Chromium, through the shell (CONTRACTS C2 "Form"): a contact created
 * by its labelled inputs, the address replaced by its id; Discard restoring the saved values; the
 * leave guard asking before unsaved edits are dropped; a required field refused before any
 * request; the server's refusal shown at its field (`aria-invalid`, `aria-describedby`); a task's
 * stage moved by the statusbar and saved at once; a task's priority stars.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { hashId, readRecord } from './form-steps.js';

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

/** The administrator's page on `/web#…`, once the form's first field is there. */
async function formAt(hash: string, firstLabel: string): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  await g.page.goto(`/web#${hash}`);
  try {
    await g.page.getByLabel(firstLabel, { exact: true }).first().waitFor({ timeout: 15_000 });
  } catch (err) {
    throw new Error(`the form did not open: ${(await g.page.locator('body').innerText()).slice(-700)}\n${[...g.pageErrors, ...g.consoleErrors].join('\n')}`, { cause: err });
  }
  return g;
}

async function create(model: string, vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', `/api/create/${model}`, vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

const read = (model: string, id: number, fields: string[]) => readRecord(t, model, id, fields);

describe('the form view', () => {
  it('creates a contact from its labelled inputs: New → fill → Save; the address gets the new id and the record exists', async () => {
    const g = await formAt('action=contacts.action_contacts&view=form', 'Name');
    const { page } = g;
    await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
    await page.getByLabel('Email', { exact: true }).fill('ada@example.test');
    await page.getByLabel('Job title').fill('Analyst');
    await page.getByRole('button', { name: 'Save' }).click();
    const id = await hashId(page);
    expect(await read('Contact', id, ['name', 'email', 'job_title', 'is_company'])).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.test', job_title: 'Analyst', is_company: false });
    // The saved record is shown again, clean: Save and Discard have nothing to do.
    await expect.poll(() => page.getByRole('heading', { name: 'Ada Lovelace' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Discard' }).isDisabled()).toBe(true);
    g.assertClean();
    await g.close();
  });

  it('keeps what is typed when a new record\'s defaults arrive late: the fields wait for them', async () => {
    const g = await formAt('action=contacts.action_contacts&view=list', 'Search');
    const { page } = g;
    // The server's answer with the new record's defaults is held back (the real answer, later), as
    // on a busy server: before, typing into the fields drawn meanwhile was wiped when it arrived.
    let held = 0;
    await page.route('**/api/ui-effect/Contact', async (route) => {
      held++;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.fallback(); // on to the context's route, which names the test database
    });
    await page.getByRole('button', { name: 'New' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Late Defaults Ltd');
    await page.getByLabel('City', { exact: true }).fill('Bergen');
    expect(held).toBeGreaterThan(0);
    // Held long enough for the defaults to land after the typing, had the fields been there.
    await page.waitForTimeout(2_000);
    await expect.poll(() => page.getByLabel('Name', { exact: true }).inputValue()).toBe('Late Defaults Ltd');
    await page.getByRole('button', { name: 'Save' }).click();
    const id = await hashId(page);
    expect(await read('Contact', id, ['name', 'city'])).toMatchObject({ name: 'Late Defaults Ltd', city: 'Bergen' });
    g.assertClean();
    await g.close();
  });

  it('Discard puts the saved values back; leaving with unsaved edits asks first, and Stay keeps them', async () => {
    const id = await create('Contact', { name: 'Grace Hopper', city: 'Arlington' });
    const g = await formAt(`action=contacts.action_contacts&view=form&id=${id}`, 'Name');
    const { page } = g;
    const city = page.getByLabel('City');
    await expect.poll(() => city.inputValue()).toBe('Arlington');
    await city.fill('New York');
    await page.getByRole('button', { name: 'Discard' }).click();
    await expect.poll(() => city.inputValue()).toBe('Arlington');
    await expect.poll(() => page.getByRole('button', { name: 'Discard' }).isDisabled()).toBe(true);

    await city.fill('Boston');
    const menuLink = page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Contacts', exact: true });
    await menuLink.click();
    const ask = page.getByRole('dialog', { name: 'Discard unsaved changes?' });
    await ask.waitFor();
    await ask.getByRole('button', { name: 'Stay' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(await city.inputValue()).toBe('Boston');
    expect(page.url()).toContain(`id=${id}`);
    expect((await read('Contact', id, ['city'])).city).toBe('Arlington');

    await menuLink.click();
    await page.getByRole('dialog', { name: 'Discard unsaved changes?' }).getByRole('button', { name: 'Discard changes' }).click();
    await page.waitForFunction(() => !/[#&]id=/.test(location.hash));
    await page.getByRole('table').waitFor();
    expect((await read('Contact', id, ['city'])).city).toBe('Arlington');
    g.assertClean();
    await g.close();
  });

  it('a required field left empty gets its message before any request; the server’s refusal lands at its field', async () => {
    await create('ProjectTag', { name: 'Blocked' });
    const g = await formAt('action=project.action_project_tags&view=form', 'Name');
    const { page } = g;
    const writes: string[] = [];
    page.on('request', (r) => { if (/\/api\/(create|update)\//.test(r.url())) writes.push(r.url()); });
    const name = page.getByLabel('Name', { exact: true });
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    const described = await name.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${described}"]`).textContent()).toMatch(/Name is required/);
    expect(writes).toEqual([]);

    // Typing clears the message; a name that is already taken is refused by the server (unique).
    await name.fill('Blocked');
    expect(await name.getAttribute('aria-invalid')).toBeNull();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    const message = await page.locator(`[id="${await name.getAttribute('aria-describedby')}"]`).textContent();
    expect(message).toMatch(/'name' must be unique/);
    expect(writes).toHaveLength(1);
    expect(page.url()).not.toMatch(/[#&]id=/);
    g.assertClean();
    await g.close();
  });

  it('the statusbar moves a task to the clicked stage and saves it; the priority stars set the priority', async () => {
    const stages = (await t.api('POST', '/api/query/ProjectStage', { fields: ['name'], order_by: ['sequence ASC', 'id ASC'] })).json() as { id: number; name: string }[];
    expect(stages.length).toBeGreaterThan(1);
    const task = await create('ProjectTask', { name: 'Write the manual', stage: stages[0]!.id });
    const g = await formAt(`action=project.action_project_tasks&view=form&id=${task}`, 'Name');
    const { page } = g;
    const bar = page.getByRole('group', { name: 'Stage' });
    await expect.poll(() => bar.getByRole('button').count()).toBeGreaterThan(1);
    expect(await bar.getByRole('button', { name: stages[0]!.name }).getAttribute('aria-current')).toBe('step');
    await bar.getByRole('button', { name: stages[1]!.name }).click();
    await expect.poll(async () => (await read('ProjectTask', task, ['stage'])).stage?.id).toBe(stages[1]!.id);
    await expect.poll(() => bar.getByRole('button', { name: stages[1]!.name }).getAttribute('aria-current')).toBe('step');

    const priority = page.getByRole('radiogroup', { name: 'Priority' });
    await priority.getByRole('radio', { name: 'Urgent' }).click();
    // Preact renders the click's state change a moment later: poll, do not read at once.
    await expect.poll(() => priority.getByRole('radio', { name: 'Urgent' }).getAttribute('aria-checked')).toBe('true');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await read('ProjectTask', task, ['priority'])).priority).toBe('2');
    g.assertClean();
    await g.close();
  });
});
