/**
 * The sales module end to end in Debian's Chromium (issue 12 item 9): a customer created in
 * Contacts; Sales > Orders, New → that customer, two lines sold in another unit than their
 * product's (grams of a product priced per kg, dozens of one priced per unit) whose prices the
 * form's ui-effect converts → Save; Confirm moves it to "Sales Order"; Print downloads its PDF,
 * whose text (read by pdftotext) holds the order. Amounts are checked against the database.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { pdfText } from '../support/pdf-text.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { hashId, pick, readRecord } from './form-steps.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

async function uomId(identifier: string): Promise<number> {
  const res = await t.api('POST', '/api/query/UoM', { fields: ['id'], filter_str: `Q(identifier='${identifier}')` });
  return (res.json() as { id: number }[])[0]!.id;
}

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  const [kg, unit] = [await uomId('core.uom_kg'), await uomId('core.uom_unit')];
  const products = [
    { name: 'Arabica beans', default_code: 'COF-ARA', list_price: 24, uom: kg },
    { name: 'Paper cups', default_code: 'CUP-08', list_price: 0.1, uom: unit },
  ];
  const res = await t.api('POST', '/api/bulk-create/Product', products);
  expect(res.statusCode, res.body).toBe(200);
}, 90_000);
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

describe('sales in the browser', () => {
  it('a customer, an order of two lines in other units, Confirm, and its PDF', async () => {
    const g = await signedIn();
    const { page } = g;
    const nav = page.getByRole('navigation', { name: 'Main menu' });

    // The customer, from the Contacts menu.
    await nav.getByRole('link', { name: 'Contacts', exact: true }).click();
    await page.getByRole('table').waitFor();
    await page.getByRole('button', { name: 'New' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Blue Bottle Café');
    await page.getByLabel('City', { exact: true }).fill('Oakland');
    await page.getByRole('button', { name: 'Save' }).click();
    const customer = await hashId(page);

    // The order: Sales > Orders > New.
    await nav.getByRole('link', { name: 'Orders' }).click();
    await page.waitForURL(/#action=sales\.action_sale_orders/);
    await page.getByRole('table').waitFor();
    await page.getByRole('button', { name: 'New' }).click();
    await page.waitForURL(/view=form/);
    await pick(page, 'Customer', 'blue bottle', 'Blue Bottle Café');

    const lines = page.getByRole('table', { name: 'Order lines' });
    const row = (i: number) => lines.locator('tbody tr').nth(i);
    const addLine = page.getByRole('button', { name: 'Add a line' });

    // 500 g of a product priced 24.00 per kg: the unit price follows the unit (0.024 per g).
    await addLine.click();
    await pick(row(0), 'Product', 'arabica', /Arabica beans/);
    await expect.poll(() => row(0).getByRole('combobox', { name: 'Unit of measure' }).inputValue()).toBe('kg');
    await pick(row(0), 'Unit of measure', 'g', /^g$/);
    await expect.poll(() => row(0).getByLabel('Unit price').inputValue()).toMatch(/^0\.024/);
    await row(0).getByLabel('Quantity').fill('500');

    // 2 dozen cups priced 0.10 per unit: 1.20 per dozen.
    await addLine.click();
    await pick(row(1), 'Product', 'cups', /Paper cups/);
    await expect.poll(() => row(1).getByRole('combobox', { name: 'Unit of measure' }).inputValue()).toBe('Units');
    await pick(row(1), 'Unit of measure', 'doz', 'Dozens');
    await expect.poll(() => row(1).getByLabel('Unit price').inputValue()).toMatch(/^1\.2/);
    await row(1).getByLabel('Quantity').fill('2');
    await row(1).getByLabel('Quantity').blur();
    // The total follows the lines before anything is saved (12.00 + 2.40).
    await expect.poll(() => page.getByLabel('Total', { exact: true }).textContent()).toMatch(/14\.40/);

    await page.getByRole('button', { name: 'Save' }).click();
    const order = await hashId(page);
    const saved = await read('SaleOrder', order, ['name', 'customer', 'amount_total', 'stage', 'order_lines.product', 'order_lines.uom', 'order_lines.quantity', 'order_lines.price_unit', 'order_lines.subtotal']);
    expect(saved.customer.id).toBe(customer);
    expect(saved.amount_total).toBeCloseTo(14.4, 2);
    expect(saved.stage.display_name).toBe('Quotation');
    expect(saved.order_lines.map((l: any) => [l.product.display_name, l.uom.display_name, l.quantity, l.price_unit, l.subtotal])).toEqual([
      [expect.stringContaining('Arabica beans'), 'g', 500, 0.024, 12],
      [expect.stringContaining('Paper cups'), 'Dozens', 2, 1.2, 2.4],
    ]);

    // Confirm: the quotation becomes a sales order, and the statusbar says so.
    const bar = page.getByRole('group', { name: 'Stage' });
    await expect.poll(() => bar.getByRole('button', { name: 'Quotation', exact: true }).getAttribute('aria-current')).toBe('step');
    await page.getByRole('group', { name: 'Actions' }).getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(async () => (await read('SaleOrder', order, ['stage'])).stage.display_name).toBe('Sales Order');
    await expect.poll(() => bar.getByRole('button', { name: 'Sales Order' }).getAttribute('aria-current')).toBe('step');

    // Print: the PDF downloads under the report's file name and holds the order's text.
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Print Quotation / Order' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe(`Order ${saved.name}.pdf`);
    const pdf = await readFile((await file.path())!);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(pdf);
    expect(text).toContain(saved.name);
    expect(text).toContain('Blue Bottle Café');
    expect(text).toMatch(/Arabica beans/);
    expect(text).toMatch(/14\.40/);

    // The list shows the order with its stage and total.
    await nav.getByRole('link', { name: 'Orders' }).click();
    const listed = page.getByRole('table').locator('tbody tr[data-id]').filter({ hasText: saved.name });
    await expect.poll(() => listed.count()).toBe(1);
    expect(await listed.innerText()).toMatch(/Blue Bottle Café[\s\S]*Sales Order[\s\S]*14\.40/);
    g.assertClean();
    await g.close();
  });
});
