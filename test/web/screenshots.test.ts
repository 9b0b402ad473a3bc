/**
 * The README's screenshots (docs/screenshots/*.png), produced by the real client on a real
 * database: the sign-in page, a list and a form, each in the light and the dark theme (the
 * browser's `prefers-color-scheme`), on a desktop (1280×800) and a phone (360×740). Only the
 * viewport is captured, at a device scale of 1, so each file stays small. Regenerate with
 * `npx vitest run test/web/screenshots.test.ts`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const OUT = join(process.cwd(), 'docs', 'screenshots');
const SIZES = { desktop: { width: 1280, height: 800 }, mobile: { width: 360, height: 740 } } as const;
const SCHEMES = ['light', 'dark'] as const;
/** A file small enough for the repository (a 1280×800 page of UI compresses far below this). */
const MAX_BYTES = 250_000;

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let order: number;

async function json(method: 'POST' | 'PUT', url: string, body: unknown): Promise<any> {
  const res = await t.api(method, url, body);
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

/** A small, believable company: customers with their people and tags, products, and an order. */
async function seed(): Promise<void> {
  // The users' own contacts (messaging gives each user one) are archived: the address book shows the company's.
  await json('PUT', '/api/bulk-update/Contact', { selection: { filter_str: 'Q(user__isnull=False)' }, vals: { active: false } });
  // The contacts module's own tags (VIP, Supplier, …) plus one of ours.
  const tags = await json('POST', '/api/query/ContactTag', { fields: ['name'] }) as { id: number; name: string }[];
  const tagId = (name: string) => tags.find((tag) => tag.name === name)!.id;
  const [vip, supplier] = [tagId('VIP'), tagId('Supplier')];
  const wholesale = (await json('POST', '/api/create/ContactTag', { name: 'Wholesale' })).id as number;
  const companies = await json('POST', '/api/bulk-create/Contact', [
    { name: 'Northwind Traders', is_company: true, email: 'orders@northwind.example', phone: '+1 206 555 0100', city: 'Seattle', tags: [vip, wholesale] },
    { name: 'Blue Bottle Café', is_company: true, email: 'hello@bluebottle.example', phone: '+1 510 555 0142', city: 'Oakland', tags: [wholesale] },
    { name: 'Lindqvist Rostery AB', is_company: true, email: 'info@lindqvist.example', phone: '+46 8 555 210 00', city: 'Stockholm', tags: [supplier] },
    { name: 'Café de Flore', is_company: true, email: 'contact@flore.example', phone: '+33 1 55 55 26 44', city: 'Paris', tags: [vip] },
  ]);
  const [northwind, bluebottle, lindqvist, flore] = companies.map((r: { id: number }) => r.id);
  await json('POST', '/api/bulk-create/Contact', [
    { name: 'Nancy Davolio', parent: northwind, job_title: 'Purchasing', email: 'nancy@northwind.example', phone: '+1 206 555 0101', city: 'Seattle' },
    { name: 'Andrew Fuller', parent: northwind, job_title: 'VP Sales', email: 'andrew@northwind.example', city: 'Tacoma' },
    { name: 'James Freeman', parent: bluebottle, job_title: 'Founder', email: 'james@bluebottle.example', city: 'Oakland', tags: [vip] },
    { name: 'Karin Lindqvist', parent: lindqvist, job_title: 'Roaster', email: 'karin@lindqvist.example', phone: '+46 70 555 12 34', city: 'Stockholm' },
    { name: 'Jean Dupont', parent: flore, job_title: 'Manager', email: 'jean@flore.example', city: 'Paris' },
    { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0018', city: 'London' },
  ]);
  const uom = async (identifier: string) => (await json('POST', '/api/query/UoM', { fields: ['id'], filter_str: `Q(identifier='${identifier}')` }))[0].id as number;
  const [kg, g, unit, dozen] = [await uom('core.uom_kg'), await uom('core.uom_g'), await uom('core.uom_unit'), await uom('core.uom_dozen')];
  const [beans, cups, grinder] = (await json('POST', '/api/bulk-create/Product', [
    { name: 'Arabica beans, Ethiopia Yirgacheffe', default_code: 'COF-ETH', list_price: 24, uom: kg },
    { name: 'Paper cups 8 oz', default_code: 'CUP-08', list_price: 0.1, uom: unit },
    { name: 'Burr grinder', default_code: 'GRD-01', list_price: 189, uom: unit },
  ])).map((r: { id: number }) => r.id);
  const [tag] = (await json('POST', '/api/bulk-create/SaleTag', [{ name: 'Repeat customer' }])).map((r: { id: number }) => r.id);
  order = (await json('POST', '/api/create/SaleOrder', {
    customer: bluebottle,
    tags: [tag],
    note: 'Delivery to the Broadway store before 9 am. Payment within 30 days.',
    order_lines: [
      { product: beans, uom: g, quantity: 2500 },
      { product: cups, uom: dozen, quantity: 40 },
      { product: grinder, quantity: 1 },
    ],
  })).id;
}

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  [served, browser] = await Promise.all([serveApp(t), launchBrowser(), mkdir(OUT, { recursive: true })]);
  await seed();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

async function open(scheme: (typeof SCHEMES)[number], size: keyof typeof SIZES, signedIn: boolean): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: { colorScheme: scheme, viewport: SIZES[size], deviceScaleFactor: 1 } });
  if (signedIn) await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  return g;
}

/** Captures the viewport once the page is quiet; checks the file is a PNG of that size and small. */
async function shoot(page: Page, name: string, size: keyof typeof SIZES): Promise<void> {
  await page.waitForLoadState('networkidle');
  const png = await page.screenshot({ animations: 'disabled', caret: 'hide' });
  expect(png.subarray(1, 4).toString()).toBe('PNG');
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([SIZES[size].width, SIZES[size].height]);
  expect(png.length, `${name} is ${png.length} bytes`).toBeLessThan(MAX_BYTES);
  await writeFile(join(OUT, `${name}.png`), png);
}

describe('README screenshots', () => {
  for (const scheme of SCHEMES) {
    for (const size of Object.keys(SIZES) as (keyof typeof SIZES)[]) {
      it(`${scheme}, ${size}: sign-in, list, form`, async () => {
        const suffix = `${scheme}-${size}`;
        const signIn = await open(scheme, size, false);
        await signIn.page.goto('/web/login');
        await signIn.page.getByRole('button', { name: 'Sign in' }).waitFor();
        await signIn.page.getByText('Verified', { exact: true }).waitFor(); // the proof of work done, as a person sees it
        await shoot(signIn.page, `sign-in-${suffix}`, size);
        signIn.assertClean();
        await signIn.close();

        const g = await open(scheme, size, true);
        const { page } = g;
        await page.goto('/web#action=contacts.action_contacts');
        // A fresh browser's first list loads the client and its modules' entries: up to 20 s under a busy suite.
        await expect.poll(() => page.getByRole('table').locator('tbody tr[data-id]').count(), { timeout: 20_000 }).toBe(10);
        await shoot(page, `list-${suffix}`, size);

        await page.goto(`/web#action=sales.action_sale_orders&view=form&id=${order}`);
        await page.getByRole('table', { name: 'Order lines' }).locator('tbody tr').nth(2).waitFor();
        await expect.poll(() => page.getByLabel('Total', { exact: true }).textContent()).toMatch(/\d/);
        await shoot(page, `form-${suffix}`, size);
        g.assertClean();
        await g.close();
      });
    }
  }
});
