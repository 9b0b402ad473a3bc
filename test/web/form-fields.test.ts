/**
 * Field widgets of the form in Debian's Chromium (CONTRACTS C2 "Form"): the many-to-one
 * autocomplete (type, pick with the keyboard, `Create "…"`), many-to-many tags added and removed,
 * a sales order's lines filling themselves in through `ui-effect` when a product is chosen, the
 * order's report downloaded as a PDF, and a File field uploaded and downloaded.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { hashId, readRecord } from './form-steps.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  ids.acme = await create('Contact', { name: 'Acme Corporation', is_company: true });
  ids.globex = await create('Contact', { name: 'Globex', is_company: true });
  ids.vip = await create('ContactTag', { name: 'Gold client' });
  ids.partner = await create('ContactTag', { name: 'Reseller' });
  ids.desk = await create('Product', { name: 'Standing desk', list_price: 120 });
  ids.pen = await create('Product', { name: 'Fountain pen', list_price: 2.5 });
}, 90_000);
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

const read = (model: string, id: number, fields: string[]) => readRecord(t, model, id, fields);

async function formAt(hash: string, firstLabel: string): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: { acceptDownloads: true } });
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  await g.page.goto(`/web#${hash}`);
  await g.page.getByLabel(firstLabel, { exact: true }).first().waitFor({ timeout: 20_000 });
  return g;
}

describe('relational fields', () => {
  it('many-to-one: typing searches, arrows and Enter pick, and "Create …" creates the typed record; tags are added and removed', async () => {
    const person = await create('Contact', { name: 'Wile E.', tags: [ids.vip] });
    const g = await formAt(`action=contacts.action_contacts&view=form&id=${person}`, 'Name');
    const { page } = g;

    const employer = page.getByLabel('Works for');
    expect(await employer.getAttribute('role')).toBe('combobox');
    await employer.fill('ac');
    const listbox = page.getByRole('listbox');
    await page.getByRole('option', { name: 'Acme Corporation' }).waitFor();
    expect(await employer.getAttribute('aria-expanded')).toBe('true');
    // Only companies are offered (the field's filter): a person named like the search is not.
    await employer.press('ArrowDown');
    await employer.press('ArrowUp');
    expect(await page.getByRole('option', { name: 'Acme Corporation' }).getAttribute('aria-selected')).toBe('true');
    await employer.press('Enter');
    await listbox.waitFor({ state: 'hidden' });
    expect(await employer.inputValue()).toBe('Acme Corporation');

    // Tags: Gold client is there; Reseller is added by keyboard, then Gold client removed by its button.
    const tags = page.getByLabel('Tags', { exact: true });
    await page.getByRole('button', { name: 'Remove Gold client' }).waitFor();
    await tags.fill('Resel');
    await page.getByRole('option', { name: 'Reseller' }).waitFor();
    await tags.press('Enter');
    await page.getByRole('button', { name: 'Remove Reseller' }).waitFor();
    await page.getByRole('button', { name: 'Remove Gold client' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await read('Contact', person, ['parent', 'tags'])).parent?.id).toBe(ids.acme);
    expect((await read('Contact', person, ['tags'])).tags.map((tag: { id: number }) => tag.id)).toEqual([ids.partner]);

    // A tag that does not exist yet: the last option creates it and picks it.
    await tags.fill('Trade fair lead');
    const createOption = page.getByRole('option', { name: 'Create "Trade fair lead"' });
    await createOption.waitFor();
    await tags.press('ArrowUp'); // from the first option to the last, wrapping
    expect(await createOption.getAttribute('aria-selected')).toBe('true');
    await tags.press('Enter');
    await page.getByRole('button', { name: 'Remove Trade fair lead' }).waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await read('Contact', person, ['tags.name'])).tags.map((tag: { name: string }) => tag.name).sort()).toEqual(['Reseller', 'Trade fair lead']);
    g.assertClean();
    await g.close();
  });
});

describe('a sales order', () => {
  it('two lines fill themselves in through ui-effect when their product is chosen; saving stores them; Print downloads the PDF', async () => {
    const g = await formAt('action=sales.action_sale_orders&view=form', 'Customer');
    const { page } = g;
    const customer = page.getByLabel('Customer');
    await customer.fill('Glob');
    await page.getByRole('option', { name: 'Globex' }).click();

    const lines = page.getByRole('table');
    for (const [index, product] of [[0, 'Standing desk'], [1, 'Fountain pen']] as const) {
      await page.getByRole('button', { name: 'Add a line' }).click();
      const row = lines.getByRole('row').nth(index + 1);
      const picker = row.getByLabel('Product');
      await picker.fill(product.slice(0, 5));
      await page.getByRole('option', { name: product }).click();
      // The effect fills the description and the unit price in the row (the product's list price).
      await expect.poll(() => row.getByLabel('Description').inputValue()).toBe(product);
    }
    const second = lines.getByRole('row').nth(2);
    expect(await second.getByLabel('Unit price').inputValue()).toBe('2.50');
    await second.getByLabel('Quantity').fill('4');
    await second.getByLabel('Quantity').press('Tab');
    // 120 + 4 × 2.50, shown with the currency symbol.
    await expect.poll(() => page.getByLabel('Total', { exact: true }).textContent()).toMatch(/\$\s?130\.00/);

    await page.getByRole('button', { name: 'Save' }).click();
    const id = await hashId(page);
    const order = await read('SaleOrder', id, ['customer', 'amount_total', 'order_lines.product', 'order_lines.quantity', 'order_lines.price_unit', 'order_lines.name']);
    expect(order.customer.id).toBe(ids.globex);
    expect(order.amount_total).toBe(130);
    expect(order.order_lines.map((l: Record<string, any>) => [l.product.id, l.name, l.quantity, l.price_unit])).toEqual([
      [ids.desk, 'Standing desk', 1, 120],
      [ids.pen, 'Fountain pen', 4, 2.5],
    ]);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Print Quotation / Order' }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.pdf$/);
    const bytes = await readFile((await download.path())!);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('%PDF');
    g.assertClean();
    await g.close();
  });
});

describe('a File field', () => {
  it('uploads a file with the record and downloads it again', async () => {
    const action = await create('WindowAction', { name: 'Countries', model: 'Country', modes: 'List, Form', default_view: 'List' });
    const country = await create('Country', { name: 'Atlantis', code: 'XA' });
    const g = await formAt(`action=${action}&view=form&id=${country}`, 'Name');
    const { page } = g;
    await page.getByLabel('Flag').setInputFiles({ name: 'atlantis.svg', mimeType: 'image/svg+xml', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') });
    await page.getByText('(not saved yet)').waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await read('Country', country, ['flag'])).flag).toEqual(expect.any(Number));
    await page.getByRole('button', { name: 'Download atlantis.svg' }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download atlantis.svg' }).click()]);
    expect(download.suggestedFilename()).toBe('atlantis.svg');
    expect((await readFile((await download.path())!)).toString()).toBe('<svg xmlns="http://www.w3.org/2000/svg"/>');
    g.assertClean();
    await g.close();
  });
});
