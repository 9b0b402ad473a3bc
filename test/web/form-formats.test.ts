/**
 * What the form shows and reads, in Debian's Chromium through the shell (issue 12 item 5, CONTRACTS
 * C2 "Form"): amounts with their currency's symbol on the side its `position` says; dates typed and
 * shown in the user's language format (ISO typing accepted, a wrong date kept and refused at its
 * field); instants shown and typed in the browser's time zone and stored in UTC; a Binary field
 * uploaded, downloaded and cleared; Delete behind a confirmation; fields whose `visible_setting`
 * does not hold left out until the company turns the setting on; the server's refusal shown at the
 * order's field it is about, and above the form when it is about a line.
 *
 * The Datetime, Binary and editable Monetary fields are a probe module's (no shipped form has
 * them), opened by its own WindowAction like any other.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { Currency } from '../../modules/core/models/currency.js';
import { Language } from '../../modules/core/models/language.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { readRecord } from './form-steps.js';

const PROBE_MODELS = `
import { Model, fields } from 'fieldforge';

/** Fields no shipped form shows: an instant, raw bytes, an amount typed in a chosen currency. */
export class FormatProbe extends Model {
  static override fields = {
    name: fields.Char({ required: true }),
    happened_at: fields.Datetime(),
    recorded_at: fields.Datetime({ readonly: true }),
    scan: fields.Binary(),
    currency: fields.ManyToOne('Currency'),
    amount: fields.Monetary({ currency_field: 'currency' }),
  };
}
`;

const PROBE_VIEWS = `
- data_type: UiView
  identifier: view_format_probe_form
  name: Format probe
  type: Form
  model: FormatProbe
  arch:
    - row:
        - column:
            span: 6
            children:
              - field: { name: name }
              - field: { name: happened_at }
              - field: { name: recorded_at }
        - column:
            span: 6
            children:
              - field: { name: currency }
              - field: { name: amount }
              - field: { name: scan }
- data_type: WindowAction
  identifier: action_format_probes
  name: Format probes
  model: FormatProbe
  modes: List, Form
  default_view: List
  views: [view_format_probe_form]
`;

const ADMIN = ['admin@example.com', 'admin-password-for-tests'] as const;
const FANNY = { email: 'fanny@example.test', password: 'fanny-password-for-tests' };

let t: TestDatabase;
let root: string;
let served: ServedApp;
let browser: Browser;
const ids: Record<string, number> = {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-form-formats-'));
  await writeProbeModule(root, 'format_probe', {
    'models/index.ts': PROBE_MODELS,
    'security/access.yaml': adminAccessYaml(['FormatProbe']),
    'views/format_probe.yaml': PROBE_VIEWS,
  });
  t = await testDatabase('full', [root]);
  await t.platform.install(t.name, { init: ['sales', 'format_probe'] });
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  await t.run(async () => {
    for (const code of ['USD', 'EUR']) ids[code] = (await Currency.query({ name: code }).with_archived().first())!.id;
    await Currency.query({ id__in: [ids.EUR!] }).with_archived().update({ active: true });
    ids.fr = (await Language.query({ code: 'fr' }).with_archived().first())!.id;
  });
  expect((await t.api('PUT', `/api/update/Language/${ids.fr}`, { active: true })).statusCode).toBe(200);
  await createUserWithPassword(t, { name: 'Fanny Français', ...FANNY, groups: ['core.group_user', 'project.group_project_user'], lang: 'fr' });
  // 1 EUR = 1.10 USD (the company's currency) from 2020 on.
  const companies = (await t.api('POST', '/api/query/Company', { fields: ['name'] })).json() as { id: number }[];
  await create('CurrencyRate', { currency: ids.EUR, company: companies[0]!.id, date: '2020-01-01', rate: 1.1 });
  ids.customer = await create('Contact', { name: 'Globex', is_company: true });
  ids.desk = await create('Product', { name: 'Standing desk', list_price: 130 });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function create(model: string, vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', `/api/create/${model}`, vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

const read = (model: string, id: number, fields: string[]) => readRecord(t, model, id, fields);

/** The page of `who` on `/web#…`, once the form's field labelled `firstLabel` is there. */
async function formAt(hash: string, firstLabel: string, who: readonly [string, string] = ADMIN, context: BrowserContextOptions = {}): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context });
  await signInContext(t, served, g.context, who[0], who[1]);
  await g.page.goto(`/web#${hash}`);
  try {
    await g.page.getByLabel(firstLabel, { exact: true }).first().waitFor({ timeout: 20_000 });
  } catch (err) {
    throw new Error(`the form did not open: ${(await g.page.locator('body').innerText()).slice(-700)}\n${[...g.pageErrors, ...g.consoleErrors].join('\n')}`, { cause: err });
  }
  return g;
}

/** The text of the message an element is described by. */
async function messageOf(page: Page, label: string): Promise<string | null> {
  const described = await page.getByLabel(label, { exact: true }).getAttribute('aria-describedby');
  return described ? page.locator(`[id="${described.split(' ')[0]}"]`).textContent() : null;
}

const NBSP = '\u00a0';

describe('amounts', () => {
  it('show their currency’s symbol before (USD) or after (EUR) the amount, read-only and while editing', async () => {
    const usd = await create('SaleOrder', { customer: ids.customer, currency: ids.USD, order_lines: [{ product: ids.desk, quantity: 1, price_unit: 130 }] });
    const eur = await create('SaleOrder', { customer: ids.customer, currency: ids.EUR, order_lines: [{ product: ids.desk, quantity: 1, price_unit: 130 }] });
    const currencies = await t.run(() => Currency.query({ id__in: [ids.USD!, ids.EUR!] }).read(['name', 'symbol', 'position']));
    expect(Object.fromEntries(currencies.map((c) => [c.name, [c.symbol, c.position]]))).toEqual({ USD: ['$', 'Before'], EUR: ['€', 'After'] });
    expect((await read('SaleOrder', eur, ['amount_total'])).amount_total).toBe(130);

    const g = await formAt(`action=sales.action_sale_orders&view=form&id=${usd}`, 'Customer');
    const { page } = g;
    const total = page.getByLabel('Total', { exact: true });
    await expect.poll(() => total.textContent()).toBe('$130.00');
    // The line's subtotal in the lines table too.
    expect(await page.getByRole('table').getByRole('row').nth(1).textContent()).toContain('$130.00');

    await page.goto(`/web#action=sales.action_sale_orders&view=form&id=${eur}`);
    await expect.poll(() => total.textContent()).toBe(`130.00${NBSP}€`);
    expect(await page.getByRole('table').getByRole('row').nth(1).textContent()).toContain(`130.00${NBSP}€`);
    g.assertClean();
    await g.close();

    // An editable amount: the symbol sits on its side of the input; the typed number is saved.
    const probe = await create('FormatProbe', { name: 'Amounts', currency: ids.EUR, amount: 12.5 });
    const p = await formAt(`action=format_probe.action_format_probes&view=form&id=${probe}`, 'Name');
    const amount = p.page.getByLabel('Amount', { exact: true });
    await expect.poll(() => amount.inputValue()).toBe('12.50');
    const affixes = amount.locator('xpath=..').locator('.ff-affix');
    expect(await affixes.allTextContents()).toEqual(['€']);
    expect(await amount.evaluate((input) => (input.nextElementSibling as HTMLElement | null)?.textContent)).toBe('€');
    // Text that is no number stays as typed and is flagged at the field (never put back silently).
    await amount.fill('12.5.0');
    await amount.press('Tab');
    expect(await amount.inputValue()).toBe('12.5.0');
    expect(await messageOf(p.page, 'Amount')).toBe('Type a number');
    await amount.fill('1234.5');
    await amount.press('Tab');
    expect(await amount.getAttribute('aria-invalid')).toBeNull();
    await p.page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await read('FormatProbe', probe, ['amount'])).amount).toBe(1234.5);
    await expect.poll(() => amount.inputValue()).toBe('1234.50');
    p.assertClean();
    await p.close();
  });
});

describe('dates in the user’s language', () => {
  it('a French user sees and types DD/MM/YYYY, may type ISO, and a wrong date stays, is refused at its field and blocks Save', async () => {
    const language = await read('Language', ids.fr!, ['date_format']);
    expect(language.date_format).toBe('DD/MM/YYYY');
    const task = await create('ProjectTask', { name: 'Inventaire', deadline: '2026-12-31' });
    const g = await formAt(`action=project.action_project_tasks&view=form&id=${task}`, 'Name', [FANNY.email, FANNY.password]);
    const { page } = g;
    const updates: string[] = [];
    page.on('request', (r) => { if (r.url().includes('/api/update/')) updates.push(r.url()); });
    const deadline = page.getByLabel('Deadline', { exact: true });
    const save = page.getByRole('button', { name: 'Save' });
    await expect.poll(() => deadline.inputValue()).toBe('31/12/2026');
    expect(await deadline.getAttribute('placeholder')).toBe('DD/MM/YYYY');

    await deadline.fill('15/01/2027');
    await deadline.press('Tab');
    await save.click();
    await expect.poll(async () => (await read('ProjectTask', task, ['deadline'])).deadline).toBe('2027-01-15');
    await expect.poll(() => deadline.inputValue()).toBe('15/01/2027');

    // ISO is understood in every language, and shown back the French way.
    await deadline.fill('2027-02-03');
    await deadline.press('Tab');
    expect(await deadline.inputValue()).toBe('03/02/2027');
    await save.click();
    await expect.poll(async () => (await read('ProjectTask', task, ['deadline'])).deadline).toBe('2027-02-03');
    await expect.poll(() => save.isDisabled()).toBe(true);
    const sent = updates.length;

    // No 31st of February: the text stays as typed, the field says why, Save sends nothing.
    await deadline.fill('31/02/2027');
    await deadline.press('Tab');
    expect(await deadline.inputValue()).toBe('31/02/2027');
    expect(await deadline.getAttribute('aria-invalid')).toBe('true');
    expect(await messageOf(page, 'Deadline')).toBe('Type a date as DD/MM/YYYY');
    await save.click();
    await page.getByRole('alert').filter({ hasText: 'Some fields need attention before saving.' }).waitFor();
    expect(await deadline.inputValue()).toBe('31/02/2027');
    expect(updates).toHaveLength(sent);
    expect((await read('ProjectTask', task, ['deadline'])).deadline).toBe('2027-02-03');

    // Discard puts the saved date back and clears the message.
    await page.getByRole('button', { name: 'Discard' }).click();
    await expect.poll(() => page.getByLabel('Deadline', { exact: true }).inputValue()).toBe('03/02/2027');
    expect(await page.getByLabel('Deadline', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    expect(await save.isDisabled()).toBe(true);

    // Ctrl+S while the date is still being typed saves what is typed.
    await page.getByLabel('Deadline', { exact: true }).fill('20/03/2027');
    await page.keyboard.press('Control+s');
    await expect.poll(async () => (await read('ProjectTask', task, ['deadline'])).deadline).toBe('2027-03-20');
    g.assertClean();
    await g.close();
  });
});

describe('instants and bytes', () => {
  it('a Datetime shows and is typed in the browser’s time zone and is stored in UTC; a Binary is uploaded, downloaded and cleared', async () => {
    const probe = await t.run(async () => (await modelOf('FormatProbe').create({
      name: 'Probe', happened_at: '2026-01-15T08:30:00Z', recorded_at: '2026-07-01T22:15:00Z',
    })).id as number);
    const g = await formAt(`action=format_probe.action_format_probes&view=form&id=${probe}`, 'Name', ADMIN, { timezoneId: 'Europe/Paris', acceptDownloads: true });
    const { page } = g;
    const happened = page.getByLabel('Happened at', { exact: true });
    // 08:30 UTC is 09:30 in Paris in January (UTC+1); 22:15 UTC on July 1st is 00:15 on July 2nd (UTC+2).
    await expect.poll(() => happened.inputValue()).toBe('2026-01-15T09:30');
    // A read-only instant: the user's language format (English: MM/DD/YYYY h:mm a), in Paris time.
    expect(await page.getByLabel('Recorded at', { exact: true }).textContent()).toBe('07/02/2026 12:15\u202fAM');

    await happened.fill('2026-07-01T09:30');
    const bytes = Buffer.from('%PDF-1.4 not really, but bytes all the same\n');
    await page.getByLabel('Scan', { exact: true }).setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: bytes });
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await read('FormatProbe', probe, ['happened_at'])).happened_at).toBe('2026-07-01T07:30:00.000Z');
    expect((await read('FormatProbe', probe, ['scan'])).scan).toBe(bytes.toString('base64'));

    // After the save the form shows what is stored: the same local time, the bytes' size.
    await page.reload();
    await expect.poll(() => page.getByLabel('Happened at', { exact: true }).inputValue(), { timeout: 20_000 }).toBe('2026-07-01T09:30');
    await page.getByText(`${bytes.length} B`, { exact: true }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    expect(await readFile((await download.path())!)).toEqual(bytes);

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('button', { name: 'Upload' }).waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await read('FormatProbe', probe, ['scan'])).scan).toBeNull();
    g.assertClean();
    await g.close();
  });
});

describe('Delete', () => {
  it('asks first: Cancel keeps the record, Delete removes it and goes back to the list', async () => {
    const task = await create('ProjectTask', { name: 'Obsolete task' });
    const g = await formAt(`action=project.action_project_tasks&view=form&id=${task}`, 'Name');
    const { page } = g;
    await expect.poll(() => page.getByLabel('Name', { exact: true }).inputValue()).toBe('Obsolete task');
    const deletes: string[] = [];
    page.on('request', (r) => { if (r.method() === 'DELETE' || r.url().includes('/api/delete')) deletes.push(r.url()); });

    await page.getByRole('button', { name: 'Delete' }).click();
    let ask = page.getByRole('dialog', { name: 'Delete Obsolete task?' });
    await ask.waitFor();
    expect(await ask.textContent()).toContain('cannot be undone');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(deletes).toEqual([]);
    expect((await read('ProjectTask', task, ['name'])).name).toBe('Obsolete task');
    expect(page.url()).toContain(`id=${task}`);

    await page.getByRole('button', { name: 'Delete' }).click();
    ask = page.getByRole('dialog', { name: 'Delete Obsolete task?' });
    await ask.getByRole('button', { name: 'Delete' }).click();
    await page.waitForFunction(() => /[#&]view=list/.test(location.hash) && !/[#&]id=/.test(location.hash));
    await page.getByRole('table').waitFor();
    await page.getByRole('status').filter({ hasText: 'Obsolete task deleted' }).waitFor();
    expect(deletes).toHaveLength(1);
    expect((await t.api('POST', `/api/fetch/ProjectTask/${task}`, { fields: ['name'] })).statusCode).toBe(404);
    expect(await page.getByRole('table').getByRole('row', { name: /Obsolete task/ }).count()).toBe(0);
    g.assertClean();
    await g.close();
  });
});

describe('visible_setting', () => {
  it('leaves the order’s currency, rate and company total out until the company turns Multi-Currency on', async () => {
    const settings = (await t.api('POST', '/api/query/Settings', { fields: ['enable_multi_currency'] })).json() as { id: number; enable_multi_currency: boolean }[];
    expect(settings).toHaveLength(1);
    const setting = settings[0]!.id;
    expect((await t.api('PUT', `/api/update/Settings/${setting}`, { enable_multi_currency: false })).statusCode).toBe(200);
    const order = await create('SaleOrder', { customer: ids.customer, currency: ids.EUR, order_lines: [{ product: ids.desk, quantity: 1, price_unit: 130 }] });

    const g = await formAt(`action=sales.action_sale_orders&view=form&id=${order}`, 'Customer');
    const { page } = g;
    const gated = ['Currency', 'Currency rate', 'Total in company currency'];
    await expect.poll(() => page.getByLabel('Total', { exact: true }).textContent()).toBe(`130.00${NBSP}€`);
    for (const label of gated) expect(await page.getByLabel(label, { exact: true }).count(), label).toBe(0);

    expect((await t.api('PUT', `/api/update/Settings/${setting}`, { enable_multi_currency: true })).statusCode).toBe(200);
    await page.reload();
    await page.getByLabel('Currency rate', { exact: true }).waitFor({ timeout: 20_000 });
    for (const label of gated) expect(await page.getByLabel(label, { exact: true }).count(), label).toBe(1);
    await expect.poll(() => page.getByLabel('Currency', { exact: true }).inputValue()).toBe('EUR');
    expect(await read('SaleOrder', order, ['amount_total_company', 'currency_rate'])).toMatchObject({ currency_rate: 1.1, amount_total_company: 143 });
    expect(await page.getByLabel('Currency rate', { exact: true }).inputValue()).toBe('1.10');
    expect(await page.getByLabel('Total in company currency', { exact: true }).textContent()).toBe('$143.00');
    g.assertClean();
    await g.close();
  });
});

describe('the server’s refusals', () => {
  it('land at the order’s field when they are about the order, and above the form when they are about a line', async () => {
    await create('SaleOrder', { name: 'SO-TAKEN', customer: ids.customer, order_lines: [{ product: ids.desk }] });
    const order = await create('SaleOrder', { name: 'SO-FREE', customer: ids.customer, order_lines: [{ product: ids.desk }] });
    const g = await formAt(`action=sales.action_sale_orders&view=form&id=${order}`, 'Customer');
    const { page } = g;
    const reference = page.getByLabel('Reference', { exact: true });
    const save = page.getByRole('button', { name: 'Save' });
    await expect.poll(() => reference.inputValue()).toBe('SO-FREE');

    // The order's own field: its unique reference.
    await reference.fill('SO-TAKEN');
    await save.click();
    await expect.poll(() => reference.getAttribute('aria-invalid')).toBe('true');
    expect(await messageOf(page, 'Reference')).toMatch(/'name' must be unique/);
    await reference.fill('SO-FREE');

    // Text that is no number in a line's cell: the cell says so and Save sends nothing.
    const updates: string[] = [];
    page.on('request', (r) => { if (r.url().includes('/api/update/')) updates.push(r.url()); });
    const row = page.getByRole('table').getByRole('row').nth(1);
    const quantity = row.getByLabel('Quantity');
    await quantity.fill('2..5');
    await quantity.press('Tab');
    expect(await quantity.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`[id="${await quantity.getAttribute('aria-describedby')}"]`).textContent()).toBe('Type a number');
    await save.click();
    await page.locator('.ff-form-alert').filter({ hasText: 'Some fields need attention before saving.' }).waitFor();
    expect(updates).toEqual([]);
    await quantity.fill('3');
    await quantity.press('Tab');
    expect(await quantity.getAttribute('aria-invalid')).toBeNull();
    // Unreadable text in a line that is then removed no longer holds the save back.
    await page.getByRole('button', { name: 'Add a line' }).click();
    const added = page.getByRole('table').getByRole('row').nth(2).getByLabel('Quantity');
    await added.fill('x');
    await added.press('Tab');
    expect(await added.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Remove line 2' }).click();
    await save.click();
    await expect.poll(async () => (await read('SaleOrder', order, ['order_lines.quantity'])).order_lines.map((l: { quantity: number }) => l.quantity)).toEqual([3]);
    expect(updates).toHaveLength(1);

    // A line's unit of another category: the line's refusal is no field of the order's.
    const unit = row.getByLabel('Unit of measure');
    await expect.poll(() => unit.inputValue()).toBe('Units');
    await unit.fill('kg');
    await page.getByRole('option', { name: 'kg', exact: true }).click();
    await save.click();
    await page.locator('.ff-form-alert').filter({ hasText: /cannot measure this product/ }).waitFor();
    expect(await page.locator('.ff-form-alert').getAttribute('role')).toBe('alert');
    expect(await reference.getAttribute('aria-invalid')).toBeNull();
    expect(await row.getByLabel('Description').getAttribute('aria-invalid')).toBeNull();
    expect((await read('SaleOrder', order, ['order_lines.uom'])).order_lines[0].uom.display_name).toBe('Units');
    g.assertClean();
    await g.close();
  });
});
