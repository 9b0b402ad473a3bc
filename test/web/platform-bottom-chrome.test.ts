/**
 * `bottomChrome.claim(element, {order})` (spec §4.11, CONTRACTS C2) in Debian's Chromium: claims
 * stack by order (lower closer to the screen edge: customer bar 0, admin toolbar 10), heights
 * are summed into `--ff-chrome-offset` on each claimed element and `--ff-bottom-chrome` on the
 * root, both removed when nothing is claimed; an element hidden with `display: none` keeps its
 * claim but takes no space; a size change re-lays the stack; toasts sit above it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { openPlatformPage } from '../fixtures/web/platform-page.js';

// The page's globals in the functions evaluated there (the project compiles for Node, without the DOM library).
declare const window: any, document: any, getComputedStyle: any, innerHeight: number;

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('core');
  served = await serveApp(t);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

const BARS = `
  <main><h1>Shop</h1></main>
  <div id="admin" class="ff-bottom-chrome" style="height: 40px">Admin toolbar</div>
  <div id="customer" class="ff-bottom-chrome" style="height: 30px">Customer bar</div>
  <div id="extra" class="ff-bottom-chrome" style="height: 12px">Extra</div>`;

/** The custom properties as the page holds them, and where each bar really sits (distance of its bottom edge from the viewport's). */
function layout(page: Page) {
  return page.evaluate(() => {
    const prop = (el: any, name: string) => el.style.getPropertyValue(name) || null;
    const lift = (id: string) => {
      const el = document.getElementById(id);
      return getComputedStyle(el).display === 'none' ? null : Math.round(innerHeight - el.getBoundingClientRect().bottom);
    };
    return {
      total: prop(document.documentElement, '--ff-bottom-chrome'),
      admin: prop(document.getElementById('admin'), '--ff-chrome-offset'),
      customer: prop(document.getElementById('customer'), '--ff-chrome-offset'),
      extra: prop(document.getElementById('extra'), '--ff-chrome-offset'),
      lifts: { admin: lift('admin'), customer: lift('customer'), extra: lift('extra') },
    };
  });
}

describe('bottomChrome.claim', () => {
  it('stacks claims by order with summed offsets, follows size changes and display: none, and clears everything when released', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: { viewport: { width: 360, height: 640 } } });
    const page = await openPlatformPage(g, BARS);
    // The admin toolbar claims first, but the customer bar (order 0) sits at the edge below it.
    await page.evaluate(() => {
      const { bottomChrome } = window.fieldforge;
      window.releaseAdmin = bottomChrome.claim(document.getElementById('admin'), { order: 10 });
      window.releaseCustomer = bottomChrome.claim(document.getElementById('customer'), { order: 0 });
    });
    await expect.poll(() => layout(page)).toEqual({
      total: '70px', admin: '30px', customer: '0px', extra: null,
      lifts: { admin: 30, customer: 0, extra: 0 },
    });
    expect(await page.evaluate(() => typeof window.releaseAdmin)).toBe('function');

    // Equal orders stack in claim order; a third claim between the two moves the admin toolbar up.
    await page.evaluate(() => { window.releaseExtra = window.fieldforge.bottomChrome.claim(document.getElementById('extra'), { order: 5 }); });
    await expect.poll(() => layout(page)).toEqual({
      total: '82px', admin: '42px', customer: '0px', extra: '30px',
      lifts: { admin: 42, customer: 0, extra: 30 },
    });

    // A bar that grows pushes the ones above it.
    await page.evaluate(() => { document.getElementById('customer').style.height = '50px'; });
    await expect.poll(() => layout(page)).toMatchObject({ total: '102px', admin: '62px', customer: '0px', extra: '50px' });

    // display: none keeps the claim but takes no space; shown again, it takes its place back.
    await page.evaluate(() => { document.getElementById('customer').style.display = 'none'; });
    await expect.poll(() => layout(page)).toEqual({
      total: '52px', admin: '12px', customer: '0px', extra: '0px',
      lifts: { admin: 12, customer: null, extra: 0 },
    });
    await page.evaluate(() => { document.getElementById('customer').style.display = ''; });
    await expect.poll(() => layout(page)).toMatchObject({ total: '102px', admin: '62px', customer: '0px', extra: '50px' });

    // Toasts rise above the whole stack.
    await page.evaluate(() => window.fieldforge.toast.show({ message: 'Added to cart', duration: 0 }));
    const toastLift = await page.evaluate(() => Math.round(innerHeight - document.querySelector('.ff-toasts').getBoundingClientRect().bottom));
    expect(toastLift).toBeGreaterThanOrEqual(102);

    // Releasing removes the element's offset; the last release removes the root's total too.
    await page.evaluate(() => window.releaseCustomer());
    await expect.poll(() => layout(page)).toMatchObject({ total: '52px', admin: '12px', customer: null, extra: '0px' });
    await page.evaluate(() => { window.releaseExtra(); window.releaseAdmin(); window.releaseAdmin(); });
    await expect.poll(() => layout(page)).toMatchObject({ total: null, admin: null, customer: null, extra: null });
    expect(await page.evaluate(() => document.documentElement.getAttribute('style'))).toBeFalsy();
    // Nothing claimed: a later size change sets nothing again.
    await page.evaluate(() => { document.getElementById('admin').style.height = '44px'; });
    await page.waitForTimeout(100);
    expect((await layout(page)).total).toBeNull();
    g.assertClean();
    await g.close();
  });

  it('refuses what is not an element or a numeric order, and a second claim of an element only changes its order', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const page = await openPlatformPage(g, BARS);
    const result = await page.evaluate(() => {
      const { bottomChrome } = window.fieldforge;
      const errors: string[] = [];
      for (const bad of [() => bottomChrome.claim(null), () => bottomChrome.claim(document.getElementById('admin'), { order: 'top' })]) {
        try {
          bad();
        } catch (err) {
          errors.push((err as Error).constructor.name);
        }
      }
      bottomChrome.claim(document.getElementById('admin'), { order: 10 });
      const release = bottomChrome.claim(document.getElementById('customer'));
      // Claimed again with a higher order: it moves above the admin toolbar.
      bottomChrome.claim(document.getElementById('customer'), { order: 20 });
      return { errors, release: typeof release };
    });
    expect(result).toEqual({ errors: ['TypeError', 'TypeError'], release: 'function' });
    await expect.poll(() => layout(page)).toMatchObject({ total: '70px', admin: '0px', customer: '40px', extra: null });
    g.assertClean();
    await g.close();
  });
});
