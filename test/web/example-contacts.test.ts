/**
 * The contacts module end to end in Debian's Chromium (issue 12 item 9): from the menu to the
 * list, New → a company with a tag created on the fly → Save; then a person who works for it,
 * picked through the autocomplete; the list finds both by the search box and opens a record by
 * its row. Every step is checked against what the database holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { hashId, pick, readRecord } from './form-steps.js';

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

async function signedIn(): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  await g.page.goto('/web');
  await g.page.getByRole('navigation', { name: 'Main menu' }).waitFor();
  return g;
}

const read = (model: string, id: number, fields: string[]) => readRecord(t, model, id, fields);

describe('contacts in the browser', () => {
  it('menu → list → New company with a new tag → Save; a person who works for it; search and open by the row', async () => {
    const g = await signedIn();
    const { page } = g;
    const nav = page.getByRole('navigation', { name: 'Main menu' });
    await nav.getByRole('link', { name: 'Contacts', exact: true }).click();
    await page.waitForURL(/#action=contacts\.action_contacts/);
    await page.getByRole('table').waitFor();
    expect(await page.getByRole('columnheader', { name: 'Works for' }).count()).toBe(1);

    // A company, with a tag that does not exist yet (the autocomplete offers to create it).
    await page.getByRole('button', { name: 'New' }).click();
    await page.waitForURL(/view=form/);
    await page.getByLabel('Name', { exact: true }).fill('Northwind Traders');
    // Clicked where a person clicks: on the switch itself.
    await page.getByRole('switch', { name: 'Is company' }).check({ timeout: 5_000 });
    await page.getByLabel('Email', { exact: true }).fill('orders@northwind.test');
    await page.getByLabel('City', { exact: true }).fill('Seattle');
    await pick(page, 'Tags', 'Wholesale', 'Create "Wholesale"');
    await expect.poll(() => page.getByRole('button', { name: 'Remove Wholesale' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Save' }).click();
    const company = await hashId(page);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved' }).count()).toBeGreaterThan(0);
    expect(await read('Contact', company, ['name', 'is_company', 'email', 'city', 'tags'])).toMatchObject({
      name: 'Northwind Traders', is_company: true, email: 'orders@northwind.test', city: 'Seattle', tags: [{ display_name: 'Wholesale' }],
    });

    // New from the saved form: a person working for the company (only companies are offered).
    await page.getByRole('button', { name: 'New' }).click();
    await page.waitForFunction(() => !/[#&]id=/.test(location.hash));
    await page.getByLabel('Name', { exact: true }).fill('Nancy Davolio');
    await page.getByLabel('Job title').fill('Sales Representative');
    await pick(page, 'Works for', 'northwind', 'Northwind Traders');
    await page.getByRole('button', { name: 'Save' }).click();
    const person = await hashId(page);
    expect(person).not.toBe(company);
    expect(await read('Contact', person, ['name', 'parent', 'job_title', 'is_company'])).toMatchObject({
      name: 'Nancy Davolio', parent: { id: company }, job_title: 'Sales Representative', is_company: false,
    });

    // Back to the list; the search box narrows it (names and e-mails), the row opens the record.
    // (Users have contacts of their own now, so the list holds more than these two: the count
    // checks that the search applied, not that the list was short.)
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('button', { name: 'Contacts' }).first().click();
    await page.waitForURL(/view=list|#action=contacts\.action_contacts$/);
    const rows = page.getByRole('table').locator('tbody tr[data-id]');
    await page.getByRole('searchbox', { name: 'Search' }).fill('northwind');
    await expect.poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('Northwind Traders')]);
    await page.getByRole('searchbox', { name: 'Search' }).fill('davolio');
    await expect.poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('Nancy Davolio')]);
    const nancy = rows.filter({ hasText: 'Nancy Davolio' });
    expect(await nancy.innerText()).toContain('Northwind Traders');
    await nancy.locator('td').nth(1).click();
    await page.waitForURL(new RegExp(`[#&]id=${person}(&|$)`));
    await expect.poll(() => page.getByLabel('Job title').inputValue()).toBe('Sales Representative');
    expect(await page.getByRole('combobox', { name: 'Works for' }).inputValue()).toBe('Northwind Traders');
    g.assertClean();
    await g.close();
  });
});
