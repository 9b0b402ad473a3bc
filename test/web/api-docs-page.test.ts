/**
 * The API reference page in a real browser (Debian's Chromium): a shared link opens it, the token
 * leaves the address bar, the vendored renderer shows this database's operations (SaleOrder with
 * sales installed), nothing is requested from another host and the strict CSP is not violated;
 * without a valid link the 401 page says what to do; the page holds at 360 px.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  served = await serveApp(t);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

/** Each test takes 10–20 s on an idle 2-core machine; the limit leaves room for a busy one. */
const BROWSER_TEST_MS = 120_000;
/** Rendering ~540 operations is the slow part; on a loaded machine it takes tens of seconds. */
const UI_WAIT_MS = 45_000;

/** A share made over real HTTP, so its link is this listening server's. */
async function shareLink(): Promise<{ id: number; token: string; url: string }> {
  const res = await fetch(`${served.baseUrl}/api/api-docs-shares`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Browser test' }),
  });
  expect(res.status).toBe(200);
  return res.json() as Promise<{ id: number; token: string; url: string }>;
}

/** Console errors the CSP raised: the page must need nothing it forbids. */
function cspViolations(g: GuardedPage): string[] {
  return g.consoleErrors.filter((m) => /Content Security Policy/i.test(m));
}

describe('the API reference page', () => {
  it('opens from a shared link, drops the token from the URL, shows the SaleOrder operations, and reopens at 360 px with the cookie alone', async () => {
    const share = await shareLink();
    expect(share.url.startsWith(`${served.baseUrl}/api-docs?token=`)).toBe(true);
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const response = await g.page.goto(share.url);
    expect(response!.status()).toBe(200);
    const landed = new URL(g.page.url());
    expect(landed.pathname).toBe('/api-docs');
    expect(landed.searchParams.has('token')).toBe(false);
    expect(g.page.url()).not.toContain(share.token);

    await expect.poll(() => g.page.getByRole('heading', { name: /FieldForge API/ }).count(), { timeout: UI_WAIT_MS }).toBe(1);
    // The tag of SaleOrder, expanded on demand, lists its concrete routes.
    const tag = g.page.locator('#operations-tag-SaleOrder');
    await tag.scrollIntoViewIfNeeded();
    await tag.click();
    const query = g.page.locator('#operations-SaleOrder-SaleOrder_query');
    await query.waitFor({ timeout: UI_WAIT_MS });
    // Paths render with word-break hints; their `data-path` is the path as written.
    for (const path of ['/api/query/SaleOrder', '/api/execute/SaleOrder/action_confirm', '/api/bulk-update/SaleOrder', '/api/clone/SaleOrder']) {
      await expect.poll(() => g.page.locator(`[data-path="${path}"]`).isVisible(), { message: path, timeout: UI_WAIT_MS }).toBe(true);
    }
    expect(await query.getByRole('button', { name: /Search Sales Order records/ }).count()).toBe(1);
    // An operation opens on its request body (the filter fields of a query).
    await query.getByRole('button', { name: /Search Sales Order records/ }).click();
    await expect.poll(() => query.getByText('Request body').count(), { timeout: UI_WAIT_MS }).toBeGreaterThan(0);

    // Reloaded on a 360 px screen: the cookie alone opens it again, and nothing pushes the page sideways.
    await g.page.setViewportSize({ width: 360, height: 740 });
    await g.page.reload();
    expect(new URL(g.page.url()).pathname).toBe('/api-docs');
    await expect.poll(() => g.page.getByRole('heading', { name: /FieldForge API/ }).count(), { timeout: UI_WAIT_MS }).toBe(1);
    // Deep linking: the address now names the open operation, and the reload reopens it.
    expect(new URL(g.page.url()).hash).toBe('#/SaleOrder/SaleOrder_query');
    await g.page.locator('#operations-SaleOrder-SaleOrder_query').getByText('Request body').first().waitFor({ timeout: UI_WAIT_MS });
    const overflow = await g.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(cspViolations(g)).toEqual([]);
    g.assertClean();
    await g.close();
  }, BROWSER_TEST_MS);

  it('shows the 401 page for a revoked link, and shuts the open reference on its next request', async () => {
    const share = await shareLink();
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    expect((await g.page.goto(share.url))!.status()).toBe(200);
    expect((await t.api('DELETE', `/api/api-docs-shares/${share.id}`)).statusCode).toBe(200);
    const again = await g.page.reload();
    expect(again!.status()).toBe(401);
    await expect.poll(() => g.page.getByRole('heading', { name: /missing, invalid, expired or revoked/ }).count()).toBe(1);
    const fresh = await g.page.goto(share.url);
    expect(fresh!.status()).toBe(401);
    expect(cspViolations(g)).toEqual([]);
    g.assertClean();
    await g.close();
  }, BROWSER_TEST_MS);
});
