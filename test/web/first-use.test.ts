/**
 * What a new user tripped over (issue 25 item 9), in Debian's Chromium through the shell:
 * a confirmed order offers no Confirm again and shows its locked fields and lines read-only (and
 * editable again once cancelled); a new task's form shows its first stage before saving; the form
 * of a record that does not exist offers nothing to save, create or delete, only the way back;
 * the list's sort order reaches the export; the Sales list footer total carries its currency;
 * no page asks for anything that answers 404 (the favicon).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { readRecord } from './form-steps.js';

const ExcelJS = createRequire(import.meta.url)('exceljs') as typeof import('exceljs');

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let customer: number;
let product: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  customer = await create('Contact', { name: 'First Use Customer' });
  product = await create('Product', { name: 'First Use Lamp', list_price: 30 });
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

/** The administrator's page on `path`, signed in. */
async function signedIn(path: string): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name });
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  await g.page.goto(path);
  return g;
}

describe('a sales order in the browser', () => {
  it('offers Confirm once: a confirmed order shows its customer and lines read-only, and editable again once cancelled', async () => {
    const order = await create('SaleOrder', { customer, order_lines: [{ product, quantity: 2 }] });
    const g = await signedIn(`/web#action=sales.action_sale_orders&view=form&id=${order}`);
    const { page } = g;
    const actions = page.getByRole('group', { name: 'Actions' });
    const customerBox = page.getByRole('combobox', { name: 'Customer' });
    const lines = page.getByRole('table', { name: 'Order lines' });
    await customerBox.waitFor();
    // A quotation: editable, Confirm and the discount offered.
    await expect.poll(() => customerBox.isEditable()).toBe(true);
    expect(await page.getByRole('button', { name: 'Add a line' }).count()).toBe(1);
    expect(await lines.getByLabel('Quantity').count()).toBe(1);
    expect(await actions.getByRole('button', { name: 'Apply a discount' }).count()).toBe(1);
    await actions.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(async () => (await readRecord(t, 'SaleOrder', order, ['stage'])).stage.display_name).toBe('Sales Order');

    // Confirmed: no Confirm, no discount, no rate update; customer and lines read-only.
    await expect.poll(() => actions.getByRole('button', { name: 'Confirm' }).count()).toBe(0);
    expect(await actions.getByRole('button', { name: 'Apply a discount' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Update rate' }).count()).toBe(0);
    // A read-only link is its name (an output), not a combobox.
    expect(await customerBox.count()).toBe(0);
    expect(await page.getByLabel('Customer', { exact: true }).innerText()).toBe('First Use Customer');
    expect(await page.getByRole('button', { name: 'Add a line' }).count()).toBe(0);
    // The lines are text: no input, no Remove button.
    expect(await lines.getByLabel('Quantity').count()).toBe(0);
    expect(await lines.getByRole('button', { name: /^Remove line/ }).count()).toBe(0);
    expect(await lines.innerText()).toContain('First Use Lamp');
    // What the state does not lock stays editable (the note), and Print is still there.
    expect(await page.getByLabel('Terms and conditions').isEditable()).toBe(true);
    expect(await page.getByRole('button', { name: 'Print Quotation / Order' }).count()).toBe(1);

    // Cancel: the order is editable again and can be confirmed again; Cancel is not offered twice.
    await actions.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => customerBox.count()).toBe(1);
    expect(await customerBox.isEditable()).toBe(true);
    expect(await actions.getByRole('button', { name: 'Confirm' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Add a line' }).count()).toBe(1);
    expect(await actions.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    expect((await readRecord(t, 'SaleOrder', order, ['stage'])).stage.display_name).toBe('Cancelled');
    g.assertClean();
    await g.close();
  });
});

describe('a new task', () => {
  it('shows its first stage before it is saved, and keeps it', async () => {
    const g = await signedIn('/web#action=project.action_project_tasks&view=form');
    const { page } = g;
    await page.getByLabel('Name', { exact: true }).waitFor();
    const bar = page.getByRole('group', { name: 'Stage' });
    await expect.poll(() => bar.getByRole('button', { name: 'New', exact: true }).getAttribute('aria-current')).toBe('step');
    await page.getByLabel('Name', { exact: true }).fill('Staged in the browser');
    await page.getByRole('group', { name: 'Record' }).getByRole('button', { name: 'Save' }).click();
    await page.waitForFunction(() => /[#&]id=\d+/.test(location.hash));
    const id = Number(/[#&]id=(\d+)/.exec(await page.evaluate(() => location.hash))![1]);
    expect((await readRecord(t, 'ProjectTask', id, ['stage'])).stage.display_name).toBe('New');
    g.assertClean();
    await g.close();
  });
});

describe('the form of a record that does not exist', () => {
  it('says so, offers no Save, New, Delete nor actions, and leads back to the list', async () => {
    const g = await signedIn('/web#action=sales.action_sale_orders&view=form&id=99999');
    const { page } = g;
    const alert = page.getByRole('alert').filter({ hasText: 'does not exist' });
    await alert.waitFor();
    expect(await alert.innerText()).toBe('This sales order (#99999) does not exist: it may have been deleted.');
    for (const name of ['Save', 'Discard', 'New', 'Delete', 'Confirm', 'Print Quotation / Order']) {
      expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    }
    await page.getByRole('button', { name: 'Back to Quotations and Orders' }).click();
    await page.waitForURL(/view=list|^[^#]*#action=sales\.action_sale_orders$/);
    await page.getByRole('table').waitFor();
    expect(await page.evaluate(() => location.hash)).not.toContain('id=99999');
    g.assertClean();
    await g.close();
  });
});

describe('the sales list', () => {
  it('sums its footer total in the rows’ currency, and exports in the order it shows', async () => {
    const cheap = await create('SaleOrder', { customer, note: 'cheap', order_lines: [{ product, quantity: 1 }] });
    const dear = await create('SaleOrder', { customer, note: 'dear', order_lines: [{ product, quantity: 40 }] });
    const middle = await create('SaleOrder', { customer, note: 'middle', order_lines: [{ product, quantity: 9 }] });
    const g = await signedIn('/web#action=sales.action_sale_orders');
    const { page } = g;
    const rows = page.getByRole('table').locator('tbody tr[data-id]');
    // The first list of a fresh browser loads the client and its modules' entries: up to 20 s under a busy suite.
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    const totals = await page.getByRole('table').evaluate((table) => {
      const header = [...table.querySelectorAll('thead th')].findIndex((th) => th.textContent?.trim().startsWith('Total'));
      const at = (row: Element | null) => (row?.children[header] as HTMLElement | undefined)?.innerText ?? '';
      // The footer's label spans the leading columns: its one sum cell is the Total column's.
      const sums = [...table.querySelectorAll('tfoot td.ff-list-sum')].map((td) => (td as HTMLElement).innerText).filter(Boolean);
      return { row: at(table.querySelector('tbody tr[data-id]')), footer: sums.join(' | ') };
    });
    // A row reads like "$30.00"; the footer carries the same symbol.
    const symbol = totals.row.replace(/[\d.,\s\u00a0\u2068\u2069-]/g, '');
    expect(symbol.length, totals.row).toBeGreaterThan(0);
    expect(totals.footer).toContain(symbol);
    const all: { amount_total: number }[] = await (await t.api('POST', '/api/query/SaleOrder', { fields: ['amount_total'], limit: 100 })).json();
    const sum = all.reduce((s, o) => s + o.amount_total, 0);
    expect(totals.footer.replace(/[^\d.]/g, '')).toBe(sum.toFixed(2));

    // Sorted by Total (ascending), the toolbar's Export sends that order and the file follows it.
    await page.getByRole('columnheader', { name: 'Total', exact: true }).getByRole('button').click();
    await expect.poll(() => page.getByRole('columnheader', { name: 'Total', exact: true }).getAttribute('aria-sort')).toBe('ascending');
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: /^Export/ });
    await dialog.waitFor();
    const requested = page.waitForRequest((r) => r.url().endsWith('/api/export/SaleOrder'));
    const download = page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Export', exact: true }).click();
    expect(JSON.parse((await requested).postData()!).order_by).toEqual(['amount_total ASC']);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(await readFile((await (await download).path())!) as never);
    const names: string[] = [];
    workbook.worksheets[0]!.eachRow((row, n) => { if (n > 1) names.push(String((row.values as unknown[])[1])); });
    const reference = async (id: number) => (await readRecord(t, 'SaleOrder', id, ['name'])).name as string;
    const ours = [await reference(cheap), await reference(middle), await reference(dear)];
    expect(names.filter((n) => ours.includes(n))).toEqual(ours);
    g.assertClean();
    await g.close();
  });
});

describe('every page', () => {
  it('asks for nothing that answers 404: the icon is the platform’s own, at /favicon.ico too', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const { page } = g;
    const missing: string[] = [];
    const icons: string[] = [];
    page.on('response', (r) => {
      if (r.status() === 404) missing.push(r.url());
      if (/icon|favicon/.test(r.url())) icons.push(`${r.status()} ${r.url()}`);
    });
    // Headless Chromium fetches no icon by itself: each page's declared icon is asked for as a
    // browser would, and must be there.
    const declaredIcon = async () => {
      const href = await page.evaluate(() => document.querySelector('link[rel~="icon"]')?.getAttribute('href') ?? null);
      expect(href, `the icon of ${page.url()}`).not.toBeNull();
      const icon = await page.request.get(href!);
      expect(icon.status(), href!).toBe(200);
      expect(icon.headers()['content-type']).toMatch(/^image\//);
    };
    await page.goto('/web/login');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await declaredIcon();
    await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
    await page.goto('/web');
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    await declaredIcon();
    await page.goto('/api-docs'); // the page for a missing link (401), which names no icon of its own
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.waitForTimeout(500); // the browser asks for an icon after the page has loaded
    expect(missing).toEqual([]);
    expect(await page.evaluate(() => document.title)).toMatch(/API reference/);
    const answered = await page.request.get('/favicon.ico');
    expect(answered.status()).toBe(200);
    expect(answered.headers()['content-type']).toBe('image/svg+xml');
    expect((await answered.text())).toContain('<svg');
    g.assertClean();
    await g.close();
  });
});
