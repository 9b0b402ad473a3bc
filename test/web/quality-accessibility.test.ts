/**
 * Accessibility of the web client (issue 12 item 8): axe-core (vendored from npm, evaluated in the
 * page) finds no serious or critical violation of WCAG 2.1 A/AA and best practices on the sign-in
 * page, a list, a form (with lines, a statusbar, tags), the settings screens, and a dialog — in
 * the light and the dark theme (contrast is checked in both). No page asks another host for
 * anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let task: number;

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  const contacts = await t.api('POST', '/api/bulk-create/Contact', [
    { name: 'Acme Corporation', is_company: true, city: 'Lyon', email: 'hello@acme.test' },
    { name: 'Ada Lovelace', city: 'London', email: 'ada@example.test' },
  ]);
  expect(contacts.statusCode, contacts.body).toBe(200);
  const created = await t.api('POST', '/api/create/ProjectTask', { name: 'Write the manual', priority: '1', deadline: '2030-01-31' });
  expect(created.statusCode, created.body).toBe(200);
  task = created.json().id;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

type Scheme = 'light' | 'dark';

async function page(scheme: Scheme, signedIn = true): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: { colorScheme: scheme } });
  if (signedIn) await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  return g;
}

async function expectAccessible(g: GuardedPage, what: string): Promise<void> {
  const findings = await seriousViolations(g.page);
  expect(findings, `${what}:\n${describeFindings(findings)}`).toEqual([]);
}

/** Opens `/web#<hash>` and waits for `ready` (a role and name) to be drawn. */
async function openView(g: GuardedPage, hash: string, ready: () => Promise<unknown>): Promise<void> {
  await g.page.goto(`/web#${hash}`);
  await ready();
  // Spinners and late requests settled: what axe sees is what a person reads.
  await g.page.waitForLoadState('networkidle');
}

describe.each<Scheme>(['light', 'dark'])('axe-core finds nothing serious (%s theme)', (scheme) => {
  it('on the sign-in page', async () => {
    const g = await page(scheme, false);
    await g.page.goto('/web/login');
    await g.page.getByRole('button', { name: 'Sign in' }).waitFor();
    await g.page.waitForLoadState('networkidle');
    await expectAccessible(g, 'sign-in');
    g.assertClean();
    await g.close();
  });

  it('on a list, a form and a dialog', async () => {
    const g = await page(scheme);
    const { page: p } = g;
    await openView(g, 'action=contacts.action_contacts', () => p.getByRole('table').locator('tbody tr[data-id]').first().waitFor());
    await expectAccessible(g, 'contacts list');
    // A row ticked: the selection bar and its actions.
    await p.getByRole('checkbox', { name: 'Select Ada Lovelace' }).check();
    await expectAccessible(g, 'contacts list with a selection');

    await openView(g, `action=project.action_project_tasks&view=form&id=${task}`, () => p.getByRole('group', { name: 'Stage' }).getByRole('button').first().waitFor());
    await expectAccessible(g, 'task form');
    await p.getByRole('button', { name: 'Reassign tasks' }).click();
    await p.getByRole('dialog', { name: 'Reassign tasks' }).getByRole('combobox', { name: 'Assign to' }).waitFor();
    await expectAccessible(g, 'reassign wizard dialog');
    await p.keyboard.press('Escape');

    await openView(g, 'action=contacts.action_contacts&view=form', () => p.getByLabel('Name', { exact: true }).waitFor());
    await p.getByRole('button', { name: 'Save' }).click(); // the required name refused at its field
    await p.getByLabel('Name', { exact: true }).and(p.locator('[aria-invalid="true"]')).waitFor();
    await expectAccessible(g, 'new contact form with a refused field');
    g.assertClean();
    await g.close();
  });

  it('on the settings screens', async () => {
    const g = await page(scheme);
    const { page: p } = g;
    await openView(g, 'action=core.action_modules', () => p.getByRole('heading', { name: 'Modules' }).first().waitFor());
    await expectAccessible(g, 'Settings > Modules');
    await openView(g, 'action=core.action_users', () => p.getByRole('table').locator('tbody tr[data-id]').first().waitFor());
    await expectAccessible(g, 'Settings > Users');
    await openView(g, 'action=core.action_api_keys', () => p.getByRole('button', { name: 'New' }).waitFor());
    await expectAccessible(g, 'Settings > API Keys');
    await openView(g, 'action=core.action_api_reference', () => p.getByRole('button', { name: 'New' }).waitFor());
    await expectAccessible(g, 'Settings > API Reference');
    await openView(g, 'action=core.action_profile', () => p.getByRole('heading').first().waitFor());
    await expectAccessible(g, 'profile');
    g.assertClean();
    await g.close();
  });
});
