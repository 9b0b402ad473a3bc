/**
 * The form's live updates (spec §6.3, CONTRACTS C2 "Form" and C4, issue 14 item 7) in Debian's
 * Chromium through the shell, with the real socket: a saved record is watched while its form is
 * open (the server's hub lists the page's socket as its watcher) and unwatched when the form goes;
 * a `record_changed` frame — pushed with `send_activity_update` as module code would, so the test
 * does not depend on the write paths' own pings — offers `Reload` on a clean form and `Save &
 * reload` / `Discard & reload` on a form with unsaved edits, which stay as typed until one is
 * chosen; a refused save keeps them and the prompt; a new record is not watched until saved.
 * One test goes end to end: Bob's own `PUT /api/update` of the record the page watches pings it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { User } from '../../modules/core/models/index.js';
import { sql } from 'kysely';
import { openSession } from '../../src/auth/sessions.js';
import { currentEnv } from '../../src/orm/env.js';
import { send_activity_update } from '../../src/realtime/send.js';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { hashId, readRecord } from './form-steps.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let adminUid: number;
let bobUid: number;

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  adminUid = await t.run(async () => (await User.query({ email: 'admin@example.com' }).ids())[0]!);
  bobUid = await createUserWithPassword(t, { name: 'Bob Builder', email: 'bob@example.test', password: 'bob-password-for-tests', groups: ['core.group_user', 'contacts.group_contacts_user'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

/** The administrator's page on `/web#…`, once `label`'s field is there, with the frames its socket sent and received. */
async function formAt(hash: string, label: string): Promise<GuardedPage & { sent: Record<string, any>[]; received: Record<string, any>[] }> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  const sent: Record<string, any>[] = [];
  const received: Record<string, any>[] = [];
  g.page.on('websocket', (ws) => {
    ws.on('framesent', (f) => sent.push(JSON.parse(String(f.payload))));
    ws.on('framereceived', (f) => received.push(JSON.parse(String(f.payload))));
  });
  await g.page.goto(`/web#${hash}`);
  await g.page.getByLabel(label, { exact: true }).first().waitFor({ timeout: 15_000 });
  return { ...g, sent, received };
}

async function contact(vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', '/api/create/Contact', vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

/**
 * Another person's write, in SQL under the ORM: the values Reload then reads, with no ping of the
 * write paths' own (so the test's `ping` is the only one, whenever the watch gate lights up).
 * The real pings of a real write are the end-to-end test's.
 */
async function writeElsewhere(id: number, vals: Record<string, string>): Promise<void> {
  await t.run(async () => {
    const sets = Object.entries(vals).map(([column, v]) => sql`${sql.ref(column)} = ${v}`);
    await sql`UPDATE contact SET ${sql.join(sets)} WHERE id = ${id}`.execute(currentEnv().work.trx);
  });
}

/** The `record_changed` frame of C4 to the administrator's sockets, as Bob's write sends it. */
async function ping(id: number, fields: string[]): Promise<void> {
  await t.run(async () => {
    send_activity_update(adminUid, { kind: 'record_changed', model: 'Contact', id, fields, updated_by: { id: bobUid, display_name: 'Bob Builder' }, updated_date: new Date().toISOString() });
  });
}

const watchers = (id: number) => served.app.realtime.watchersOf(t.name, 'Contact', id).size;
const prompt = (page: Page) => page.locator('.ff-record-changed');
const value = (page: Page, label: string) => page.getByLabel(label, { exact: true }).inputValue();

describe('the form’s record-changed prompt', () => {
  it('watches a saved record while open; on a change of a clean form offers Reload (keyboard), which shows the new values; unwatches on leaving', async () => {
    const id = await contact({ name: 'Carol Clean', job_title: 'Engineer' });
    const g = await formAt(`action=contacts.action_contacts&view=form&id=${id}`, 'Job title');
    const { page } = g;
    await expect.poll(() => watchers(id)).toBe(1);
    await expect.poll(() => g.sent.filter((f) => f.type === 'watch')).toEqual([{ type: 'watch', data: { model: 'Contact', id } }]);

    await writeElsewhere(id, { job_title: 'CTO', phone: '+47 555 0101' });
    await ping(id, ['job_title', 'phone']);
    const alert = page.getByRole('alert').filter({ hasText: 'This record was changed by Bob Builder' });
    await alert.waitFor();
    await expect(alert.innerText()).resolves.toMatch(/Changed: Job title, Phone\./);
    expect(await alert.getByRole('button', { name: 'Reload', exact: true }).count()).toBe(1);
    expect(await alert.getByRole('button', { name: 'Save & reload' }).count()).toBe(0);
    // Nothing moved by itself, and the focus stayed where it was.
    expect(await value(page, 'Job title')).toBe('Engineer');
    expect(await page.evaluate(() => document.activeElement?.closest('.ff-record-changed') ?? null)).toBeNull();
    const findings = await seriousViolations(page, { include: '.ff-record-changed' });
    expect(findings, describeFindings(findings)).toEqual([]);

    await alert.getByRole('button', { name: 'Reload', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => value(page, 'Job title')).toBe('CTO');
    expect(await value(page, 'Phone')).toBe('+47 555 0101');
    await expect.poll(() => prompt(page).count()).toBe(0);

    // Back to the list: the form lets go of its watch.
    await page.locator('.ff-form-trail').getByRole('button', { name: 'Contacts', exact: true }).click();
    await expect.poll(() => watchers(id)).toBe(0);
    // The browser's report of the frame it sent may come after the server has acted on it.
    await expect.poll(() => g.sent.filter((f) => f.type === 'unwatch')).toEqual([{ type: 'unwatch', data: { model: 'Contact', id } }]);
    g.assertClean();
    await g.close();
  });

  it('with unsaved edits offers Save & reload and Discard & reload, keeps what was typed until a choice, and Discard & reload shows the server’s record', async () => {
    const id = await contact({ name: 'Dora Dirty', email: 'dora@example.test', job_title: 'Analyst' });
    const g = await formAt(`action=contacts.action_contacts&view=form&id=${id}`, 'Email');
    const { page } = g;
    await expect.poll(() => watchers(id)).toBe(1);
    await page.getByLabel('Email', { exact: true }).fill('typed-by-me@example.test');
    await page.getByLabel('City', { exact: true }).fill('Trondheim');

    await writeElsewhere(id, { job_title: 'Head of analysis' });
    await ping(id, ['job_title']);
    const alert = page.getByRole('alert').filter({ hasText: 'This record was changed by Bob Builder' });
    await alert.waitFor();
    await expect(alert.innerText()).resolves.toMatch(/Changed: Job title\..*Your unsaved edits are kept/s);
    expect(await alert.getByRole('button', { name: 'Reload', exact: true }).count()).toBe(0);
    expect(await alert.getByRole('button', { name: 'Save & reload' }).count()).toBe(1);
    // A second ping adds up; the typed values stay as they are, the focus where it was.
    await page.getByLabel('City', { exact: true }).focus();
    await ping(id, ['phone']);
    await expect.poll(() => alert.innerText()).toMatch(/Changed: Job title, Phone\./);
    await page.keyboard.type(' Sør');
    await page.waitForTimeout(300);
    expect(await value(page, 'Email')).toBe('typed-by-me@example.test');
    expect(await value(page, 'City')).toBe('Trondheim Sør');
    expect(await value(page, 'Job title')).toBe('Analyst');
    const findings = await seriousViolations(page, { include: '.ff-record-changed' });
    expect(findings, describeFindings(findings)).toEqual([]);

    await alert.getByRole('button', { name: 'Discard & reload' }).click();
    await expect.poll(() => value(page, 'Job title')).toBe('Head of analysis');
    expect(await value(page, 'Email')).toBe('dora@example.test');
    expect(await value(page, 'City')).toBe('');
    await expect.poll(() => prompt(page).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Discard', exact: true }).isDisabled()).toBe(true);
    expect(await readRecord(t, 'Contact', id, ['email', 'city', 'job_title'])).toMatchObject({ email: 'dora@example.test', city: null, job_title: 'Head of analysis' });
    g.assertClean();
    await g.close();
  });

  it('Save & reload saves the edits first, then shows both; a refused save keeps the edits, the prompt and the message', async () => {
    const id = await contact({ name: 'Sam Saver', email: 'sam@example.test', job_title: 'Clerk' });
    const g = await formAt(`action=contacts.action_contacts&view=form&id=${id}`, 'Email');
    const { page } = g;
    await expect.poll(() => watchers(id)).toBe(1);
    await page.getByLabel('Email', { exact: true }).fill('sam.saved@example.test');
    await page.getByLabel('Name', { exact: true }).fill('');
    await writeElsewhere(id, { job_title: 'Chief clerk' });
    await ping(id, ['job_title']);
    const alert = page.getByRole('alert').filter({ hasText: 'This record was changed by Bob Builder' });
    await alert.waitFor();

    // Name is required: the save is refused before any request; nothing typed is lost.
    await alert.getByRole('button', { name: 'Save & reload' }).click();
    await page.getByText('Some fields need attention before saving.').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await value(page, 'Email')).toBe('sam.saved@example.test');
    expect(await alert.count()).toBe(1);
    expect(await readRecord(t, 'Contact', id, ['name', 'email'])).toMatchObject({ name: 'Sam Saver', email: 'sam@example.test' });

    await page.getByLabel('Name', { exact: true }).fill('Sam Saver-Smith');
    await alert.getByRole('button', { name: 'Save & reload' }).click();
    await expect.poll(() => value(page, 'Job title')).toBe('Chief clerk');
    expect(await value(page, 'Email')).toBe('sam.saved@example.test');
    expect(await value(page, 'Name')).toBe('Sam Saver-Smith');
    await expect.poll(() => prompt(page).count()).toBe(0);
    expect(await readRecord(t, 'Contact', id, ['name', 'email', 'job_title'])).toMatchObject({ name: 'Sam Saver-Smith', email: 'sam.saved@example.test', job_title: 'Chief clerk' });
    g.assertClean();
    await g.close();
  });

  it('does not watch a new record; once saved, the record it became is watched', async () => {
    const g = await formAt('action=contacts.action_contacts&view=form', 'Name');
    const { page } = g;
    await expect.poll(() => g.received.some((f) => f.data?.event === 'hello')).toBe(true); // the page's socket is up
    await page.getByLabel('Name', { exact: true }).fill('Nina New');
    await page.waitForTimeout(300);
    expect(g.sent.filter((f) => f.type === 'watch')).toEqual([]);
    // (The sockets of the pages closed before are gone by now: nobody watches anything.)
    await expect.poll(() => served.app.realtime.hasWatchers(t.name)).toBe(false);

    await page.getByRole('button', { name: 'Save' }).click();
    const id = await hashId(page);
    await expect.poll(() => watchers(id)).toBe(1);
    await expect.poll(() => g.sent.filter((f) => f.type === 'watch')).toEqual([{ type: 'watch', data: { model: 'Contact', id } }]);
    g.assertClean();
    await g.close();
  });

  it('end to end: another person’s update through the API prompts the open form, naming them and the field', async () => {
    const id = await contact({ name: 'Eve End-to-end', job_title: 'Intern' });
    const g = await formAt(`action=contacts.action_contacts&view=form&id=${id}`, 'Job title');
    const { page } = g;
    await expect.poll(() => watchers(id)).toBe(1);
    await page.getByLabel('Email', { exact: true }).fill('eve.typed@example.test');
    const bob = await t.run(() => openSession(bobUid, { dbName: t.name, secret: t.platform.secret, sessionHours: 1 }));
    // The watch gate may be stale for about 2 s after a first watch (C4): the ping may come late, never not at all.
    const res = await served.app.inject({
      method: 'PUT', url: `/api/update/Contact/${id}`,
      headers: { authorization: `Bearer ${bob.access_token}`, 'x-db-name': t.name, 'content-type': 'application/json' },
      payload: JSON.stringify({ job_title: 'Associate' }),
    });
    expect(res.statusCode, res.body).toBe(200);
    const alert = page.getByRole('alert').filter({ hasText: 'This record was changed by Bob Builder' });
    await alert.waitFor({ timeout: 8_000 });
    await expect(alert.innerText()).resolves.toMatch(/Changed: Job title\./);
    expect(await value(page, 'Email')).toBe('eve.typed@example.test');
    await alert.getByRole('button', { name: 'Save & reload' }).click();
    await expect.poll(() => value(page, 'Job title')).toBe('Associate');
    expect(await value(page, 'Email')).toBe('eve.typed@example.test');
    g.assertClean();
    await g.close();
  });
});
