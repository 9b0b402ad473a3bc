/**
 * The layout at 360 px wide (issue 12 item 8), a phone held upright: on the sign-in page, a list,
 * a sales order form with its lines, and a settings screen, the page never scrolls sideways and no
 * control sticks out of the screen unless it sits in a container that scrolls sideways itself (the
 * lines table); the menu opens behind its button and the record buttons are on screen. Each page's
 * screenshot is taken at that width (kept under .test-data/layout-360/ to look at) and is 360 px
 * wide.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const WIDTH = 360;
const HEIGHT = 740;
const SHOTS = join(process.cwd(), '.test-data', 'layout-360');

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let order: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  [served, browser] = await Promise.all([serveApp(t), launchBrowser(), mkdir(SHOTS, { recursive: true })]);
  const customer = (await t.api('POST', '/api/create/Contact', { name: 'Wide World Importers International Holdings', is_company: true, city: 'Johannesburg' })).json().id;
  const product = await t.api('POST', '/api/create/Product', { name: 'Ergonomic office chair with adjustable lumbar support', default_code: 'FURN-0042', list_price: 349.5 });
  expect(product.statusCode, product.body).toBe(200);
  const created = await t.api('POST', '/api/create/SaleOrder', {
    customer,
    order_lines: [{ product: product.json().id, quantity: 12 }, { product: product.json().id, quantity: 3, name: 'Spare chairs for the meeting rooms on the third floor' }],
  });
  expect(created.statusCode, created.body).toBe(200);
  order = created.json().id;
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

async function phone(signedIn = true): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: { viewport: { width: WIDTH, height: HEIGHT }, isMobile: true, hasTouch: true } });
  if (signedIn) await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  return g;
}

/**
 * Controls a person cannot reach: visible buttons, links and inputs outside the screen's width
 * that no sideways-scrolling container holds (such a container lets a finger bring them in).
 */
function unreachableControls(page: Page): Promise<string[]> {
  return page.evaluate((width) => {
    const scrollsSideways = (el: Element) => {
      for (let node = el.parentElement; node && node !== document.body; node = node.parentElement) {
        const style = getComputedStyle(node);
        if ((style.overflowX === 'auto' || style.overflowX === 'scroll') && node.scrollWidth > node.clientWidth) return true;
      }
      return false;
    };
    const out: string[] = [];
    for (const el of document.querySelectorAll('button, a[href], input, select, textarea, [role="button"], [role="link"]')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
      if (el.closest('.ff-visually-hidden, [hidden], [aria-hidden="true"]')) continue;
      if (box.left >= -1 && box.right <= width + 1) continue;
      if (scrollsSideways(el)) continue;
      const name = el.getAttribute('aria-label') || (el as HTMLElement).innerText?.trim() || el.getAttribute('name') || el.id || el.tagName;
      out.push(`${el.tagName.toLowerCase()} "${name.slice(0, 40)}" at ${Math.round(box.left)}–${Math.round(box.right)} px`);
    }
    return out;
  }, WIDTH);
}

/** Fails when the page scrolls sideways or a control is out of reach; writes the screenshot. */
async function expectFits(g: GuardedPage, name: string): Promise<void> {
  const { page } = g;
  // The screenshot first, so a failure can be looked at.
  const png = await page.screenshot();
  await writeFile(join(SHOTS, `${name}.png`), png);
  // PNG header: the width and height are the big-endian integers at bytes 16 and 20.
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([WIDTH, HEIGHT]);
  const overflow = await page.evaluate((width) => {
    const scrollWidth = document.documentElement.scrollWidth;
    if (scrollWidth <= width) return { scrollWidth, culprits: [] as string[] };
    // For the message: the elements whose hiding alone stops the sideways scroll.
    const culprits: string[] = [];
    const reaching = [...document.querySelectorAll<HTMLElement>('body *')].filter((el) => el.getBoundingClientRect().right > width + 1);
    for (const el of reaching.reverse()) {
      const before = el.style.display;
      el.style.display = 'none';
      const fixed = document.documentElement.scrollWidth <= width;
      el.style.display = before;
      if (fixed) culprits.push(`${el.tagName.toLowerCase()}${[...el.classList].map((c) => `.${c}`).join('')} "${(el.textContent ?? '').trim().slice(0, 30)}"`);
      if (culprits.length >= 3) break;
    }
    return { scrollWidth, culprits };
  }, WIDTH);
  expect(overflow.scrollWidth, `${name}: the page scrolls sideways because of ${overflow.culprits.join(', ')}`).toBeLessThanOrEqual(WIDTH);
  expect(await unreachableControls(page), `${name}: controls out of reach`).toEqual([]);
}

/** Drawn within the screen's width (once any sliding in is over). */
async function expectOnScreen(page: Page, locator: ReturnType<Page['getByRole']>, what: string): Promise<void> {
  await locator.waitFor();
  await expect.poll(async () => {
    const box = await locator.boundingBox();
    return box ? `${Math.round(box.x)}..${Math.round(box.x + box.width)}` : 'not drawn';
  }, { message: `${what} is off screen` }).toSatisfy((span: string) => {
    const [from, to] = span.split('..').map(Number);
    return from! >= 0 && to! <= WIDTH;
  });
}

describe(`the layout at ${WIDTH} px`, () => {
  it('the sign-in page', async () => {
    const g = await phone(false);
    await g.page.goto('/web/login');
    const signIn = g.page.getByRole('button', { name: 'Sign in' });
    await signIn.waitFor();
    await expectOnScreen(g.page, signIn, 'Sign in');
    await expectOnScreen(g.page, g.page.getByLabel('E-mail'), 'the e-mail input');
    await expectFits(g, 'sign-in');
    g.assertClean();
    await g.close();
  });

  it('a list, the menu behind its button, and a sales order form with lines', async () => {
    const g = await phone();
    const { page } = g;
    await page.goto('/web#action=contacts.action_contacts');
    await page.getByRole('table').locator('tbody tr[data-id]').first().waitFor();
    await expectOnScreen(page, page.getByRole('button', { name: 'New' }), 'New');
    await expectOnScreen(page, page.getByRole('searchbox', { name: 'Search' }), 'the search box');
    await expectFits(g, 'contacts-list');

    const toggle = page.getByRole('button', { name: 'Menu', exact: true });
    await toggle.click();
    const orders = page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'Orders' });
    await expectOnScreen(page, orders, 'the Orders menu');
    await expectFits(g, 'menu-open');
    await orders.click();
    await page.getByRole('table').locator('tbody tr[data-id]').first().waitFor();
    // Choosing a menu folds it: wait until it has slid away (0.15 s, longer on a busy machine).
    await expect.poll(() => orders.isVisible(), { message: 'the menu folds after a choice' }).toBe(false);
    await expectFits(g, 'orders-list');

    await page.getByRole('table').locator('tbody tr[data-id]').first().locator('td').nth(1).click();
    await page.waitForURL(new RegExp(`[#&]id=${order}(&|$)`));
    const lines = page.getByRole('table', { name: 'Order lines' });
    await lines.locator('tbody tr').nth(1).waitFor();
    for (const name of ['Save', 'Discard', 'Delete']) await expectOnScreen(page, page.getByRole('group', { name: 'Record' }).getByRole('button', { name }), name);
    await expectOnScreen(page, page.getByRole('combobox', { name: 'Customer' }), 'the Customer input');
    await expectFits(g, 'order-form');
    // The lines scroll sideways inside their own box, never the page.
    await lines.getByRole('combobox', { name: 'Product' }).first().scrollIntoViewIfNeeded();
    await expectFits(g, 'order-form-lines');
    g.assertClean();
    await g.close();
  });

  it('a settings screen and its dialog', async () => {
    const g = await phone();
    const { page } = g;
    await page.goto('/web#action=core.action_api_keys');
    const create = page.getByRole('button', { name: 'New' });
    await create.waitFor();
    await expectFits(g, 'api-keys');
    await create.click();
    const dialog = page.getByRole('dialog', { name: 'New API key' });
    await dialog.waitFor();
    await expectOnScreen(page, dialog.getByRole('button', { name: 'Create key' }), 'Create key');
    await expectFits(g, 'api-key-dialog');
    g.assertClean();
    await g.close();
  });
});
