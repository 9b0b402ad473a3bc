/**
 * Settings > Modules on a database with the core alone (issue 25 item 9): marking Sales, which
 * needs Contacts, says Contacts comes along — its card reads "To install at restart (needed by
 * Sales)" and offers no Install of its own, the catalogue reports it (`needed_by`), the banner
 * names it; taking the mark back puts Contacts back as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('core');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

const entry = async (identifier: string) => (await t.api('GET', '/api/modules')).json().find((m: { identifier: string }) => m.identifier === identifier);

describe('Settings > Modules, a module with dependencies', () => {
  it('marking Sales shows Contacts as coming along, without an Install button of its own; Cancel undoes both', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
    const { page } = g;
    await page.goto('/web#action=core.action_modules');
    const grid = page.getByRole('list', { name: 'Modules' });
    await grid.waitFor();
    const sales = grid.getByRole('article', { name: 'Sales' });
    const contacts = grid.getByRole('article', { name: 'Contacts' });
    expect(await contacts.getByRole('button', { name: 'Install Contacts' }).count()).toBe(1);

    await sales.getByRole('button', { name: 'Install Sales' }).click();
    // Sales needs Contacts and Discuss (messaging): both come along.
    await page.getByRole('status').filter({ hasText: 'Sales is marked for installation (with contacts, messaging)' }).waitFor();
    await expect.poll(() => contacts.textContent()).toContain('To install at restart (needed by Sales)');
    expect(await contacts.getByRole('button').count()).toBe(0);
    expect(await page.locator('.ff-settings-pending').innerText()).toContain('Sales (install, with Contacts, Discuss)');
    expect(await entry('contacts')).toMatchObject({ state: 'uninstalled', pending: null, needed_by: ['sales'] });
    expect(await entry('messaging')).toMatchObject({ state: 'uninstalled', pending: null, needed_by: ['sales'] });
    expect(await entry('sales')).toMatchObject({ pending: 'install', needed_by: [] });

    await sales.getByRole('button', { name: 'Cancel installation of Sales' }).click();
    await expect.poll(() => contacts.getByRole('button', { name: 'Install Contacts' }).count()).toBe(1);
    expect(await contacts.textContent()).not.toContain('To install at restart');
    expect(await entry('contacts')).toMatchObject({ needed_by: [] });
    g.assertClean();
    await g.close();
  });
});
