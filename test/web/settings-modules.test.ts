/**
 * Settings > Modules in Debian's Chromium, through the real shell (spec §2.7, CONTRACTS C2): every
 * module of the catalogue with its state; Install on one not installed marks it and says that a
 * restart applies it, with the command line to run; the mark can be taken back; the screen fits
 * 360 px. That the next start really applies a mark is tested at the service level
 * (test/http/settings-modules.test.ts).
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

describe('Settings > Modules', () => {
  it('lists the catalogue with states; Install marks a module and gives the restart message with the command; Cancel takes it back', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
    const { page } = g;
    await page.goto('/web');
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Modules' }).click();
    await page.waitForURL(/#action=core\.action_modules$/);
    const grid = page.getByRole('list', { name: 'Modules' });
    await grid.waitFor();

    const catalogue = (await t.api('GET', '/api/modules')).json() as { name: string; state: string }[];
    const cards = grid.getByRole('article');
    await expect.poll(() => cards.count()).toBe(catalogue.length);
    for (const name of ['Contacts', 'Project', 'Sales', 'Core']) expect(catalogue.some((m) => m.name === name)).toBe(true);
    const sales = grid.getByRole('article', { name: 'Sales' });
    const contacts = grid.getByRole('article', { name: 'Contacts' });
    expect(await contacts.textContent()).toContain('Installed');
    expect(await sales.textContent()).toContain('Not installed');
    expect(await sales.textContent()).toContain('Quotations and sales orders');
    expect(await contacts.getByRole('button', { name: 'Upgrade Contacts' }).count()).toBe(1);

    await sales.getByRole('button', { name: 'Install Sales' }).click();
    const command = `npx fieldforge -db ${t.name} --init sales`;
    const notice = page.getByRole('status').filter({ hasText: 'Sales is marked for installation' });
    await notice.waitFor();
    expect(await notice.textContent()).toBe(`Sales is marked for installation. Restart the server to apply, or run: ${command}`);
    await expect.poll(() => sales.textContent()).toContain('To install at restart');
    expect(await page.getByText(command, { exact: true }).count()).toBe(1);
    expect((await t.api('GET', '/api/modules')).json().find((m: { identifier: string }) => m.identifier === 'sales')).toMatchObject({ pending: 'install', state: 'uninstalled' });

    // Search and filter narrow the cards on the page.
    await page.getByLabel('Show').selectOption('pending');
    await expect.poll(() => cards.count()).toBe(1);
    await page.getByLabel('Show').selectOption('all');
    await page.getByRole('searchbox', { name: 'Search modules' }).fill('quotations');
    await expect.poll(() => cards.count()).toBe(1);
    await page.getByRole('searchbox', { name: 'Search modules' }).fill('');

    await sales.getByRole('button', { name: 'Cancel installation of Sales' }).click();
    await expect.poll(() => sales.getByRole('button', { name: 'Install Sales' }).count()).toBe(1);
    expect((await t.api('GET', '/api/modules')).json().find((m: { identifier: string }) => m.identifier === 'sales')).toMatchObject({ pending: null });
    g.assertClean();
    await g.close();
  });

  it('fits a 360 px screen: the cards stack and nothing scrolls sideways', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: { viewport: { width: 360, height: 740 } } });
    await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
    const { page } = g;
    await page.goto('/web#action=core.action_modules');
    await page.getByRole('list', { name: 'Modules' }).getByRole('article').first().waitFor();
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, view: window.innerWidth }));
    expect(widths.page).toBeLessThanOrEqual(widths.view);
    const button = page.getByRole('button', { name: 'Install Sales' });
    const box = await button.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(360);
    g.assertClean();
    await g.close();
  });
});
