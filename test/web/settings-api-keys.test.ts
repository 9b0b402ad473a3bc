/**
 * Settings > General > API Keys and API Reference in Debian's Chromium, through the real shell
 * (CONTRACTS C2, spec §5): the menu path, a key created with groups and an expiry and shown once
 * in a dialog with a warning and a Copy button (the clipboard read back), the list with prefix,
 * last use and expiry, revocation behind a confirmation after which the key is refused by the
 * server; refusals shown at the input; a share link created, shown once and revoked; and an
 * ordinary user offered none of it (the APIs answer 403).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
const ADMIN = ['admin@example.com', 'admin-password-for-tests'] as const;
const PASSWORD = 'copper-meadow-violin-17';

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  await createUserWithPassword(t, { name: 'Ulla User', email: 'ulla@example.test', password: PASSWORD, groups: ['core.group_user'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

async function signedIn(email: string, password: string, path: string): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: { permissions: ['clipboard-read', 'clipboard-write'] } });
  await signInContext(t, served, g.context, email, password);
  await g.page.goto(path);
  return g;
}

/** The status of a request made with `key` on a route every user may call. */
async function keyStatus(key: string): Promise<number> {
  const res = await t.app.inject({ method: 'POST', url: '/api/query/Company', headers: { authorization: `Bearer ${key}`, 'x-db-name': t.name, 'content-type': 'application/json' }, payload: '{"fields":["name"]}' });
  return res.statusCode;
}

describe('API Keys', () => {
  it('Settings > General > API Keys: create with groups and expiry, the key shown once with Copy and a warning, listed, revoked after confirmation', async () => {
    const g = await signedIn(...ADMIN, '/web');
    const { page } = g;
    const nav = page.getByRole('navigation', { name: 'Main menu' });
    await nav.getByRole('link', { name: 'API Keys' }).click();
    await page.waitForURL(/#action=core\.action_api_keys$/);
    await page.getByRole('heading', { level: 1, name: 'API Keys' }).waitFor();

    await page.getByRole('button', { name: 'New' }).click();
    const dialog = page.getByRole('dialog', { name: 'New API key' });
    await dialog.waitFor();
    // Nothing chosen: said at the inputs before any request.
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const name = dialog.getByLabel('Name');
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    const described = await name.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${described!.split(' ')[0]}"]`).textContent()).toContain('Enter a name');
    await expect.poll(() => dialog.getByText('Choose at least one group').count()).toBe(1);

    await name.fill('Nightly export');
    await dialog.getByRole('checkbox', { name: /Administrator/ }).check();
    await dialog.getByRole('checkbox', { name: /core\.group_user/ }).check();
    const expiry = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await dialog.getByLabel('Expiry date').fill(expiry);
    const created = page.waitForResponse((r) => r.url().endsWith('/api/api-keys') && r.request().method() === 'POST');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const sent = (await created).request().postDataJSON();
    expect(sent).toEqual({ name: 'Nightly export', groups: expect.arrayContaining(['core.group_admin', 'core.group_user']), expires_at: expiry });

    const shown = page.getByRole('dialog', { name: 'API key created' });
    await shown.waitFor();
    expect(await shown.textContent()).toContain('Shown only once.');
    expect(await shown.textContent()).toContain('cannot show it again');
    const key = await shown.getByLabel('API key').inputValue();
    expect(key).toMatch(/^ff_[A-Za-z0-9_-]{43}$/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await expect.poll(() => shown.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });
    // Gone for good: the page holds the key nowhere any more.
    expect(await page.content()).not.toContain(key);

    // The key works; the list shows its prefix, its last use and its expiry.
    expect(await keyStatus(key)).toBe(200);
    await page.reload();
    const table = page.getByRole('table', { name: 'API keys' });
    const row = table.getByRole('row').filter({ hasText: 'Nightly export' });
    await row.waitFor();
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells[1]).toBe(`${key.slice(0, 10)}…`);
    expect(cells[4]).not.toBe('Never');
    expect(cells[5]).toContain(expiry.slice(0, 4));
    expect(cells[6]).toBe('Active');
    const columns = await table.getByRole('columnheader').allTextContents();
    expect(columns.slice(0, 7)).toEqual(['Name', 'Key', 'Service account', 'Created', 'Last used', 'Expires', 'Status']);

    // Revoke: asked first; Cancel keeps it, Revoke ends it at once.
    await row.getByRole('button', { name: 'Revoke Nightly export' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke API key?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await keyStatus(key)).toBe(200);
    await row.getByRole('button', { name: 'Revoke Nightly export' }).click();
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.getByRole('cell').nth(6).textContent()).toBe('Revoked');
    expect(await row.getByRole('button', { name: /Revoke/ }).count()).toBe(0);
    expect(await keyStatus(key)).toBe(401);
    await page.getByRole('status').filter({ hasText: 'revoked' }).first().waitFor();
    g.assertClean();
    await g.close();
  });

  it("shows the server's refusal at the input it names", async () => {
    const g = await signedIn(...ADMIN, '/web#action=core.action_api_keys');
    const { page } = g;
    await page.getByRole('button', { name: 'New' }).click();
    const dialog = page.getByRole('dialog', { name: 'New API key' });
    await dialog.getByLabel('Name').fill('x'.repeat(300));
    // The input's own limit stops typing at 255; force a longer value the way a script could.
    await dialog.getByLabel('Name').evaluate((el: HTMLInputElement) => {
      el.removeAttribute('maxlength');
      el.value = 'x'.repeat(300);
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await dialog.getByRole('checkbox', { name: /Administrator/ }).check();
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const name = dialog.getByLabel('Name');
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    const described = (await name.getAttribute('aria-describedby'))!.split(' ')[0]!;
    expect(await page.locator(`[id="${described}"]`).textContent()).toBe("'name' may hold at most 255 characters");
    expect((await t.api('GET', '/api/api-keys')).json().some((k: { name: string }) => k.name.startsWith('xxxx'))).toBe(false);
    g.assertClean();
    await g.close();
  });
});

describe('API Reference', () => {
  it('creates a link shown once with Copy, lists it, revokes it after confirmation', async () => {
    const g = await signedIn(...ADMIN, '/web');
    const { page } = g;
    await page.getByRole('navigation', { name: 'Main menu' }).getByRole('link', { name: 'API Reference' }).click();
    await page.waitForURL(/#action=core\.action_api_reference$/);
    await page.getByRole('button', { name: 'New' }).click();
    const dialog = page.getByRole('dialog', { name: 'New API reference link' });
    await dialog.getByLabel('Name').fill('Integration partner');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    const shown = page.getByRole('dialog', { name: 'API reference link created' });
    await shown.waitFor();
    const url = await shown.getByLabel('Link').inputValue();
    expect(url).toMatch(new RegExp(`^${served.baseUrl}/api-docs\\?token=`));
    await shown.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await shown.getByRole('button', { name: 'Done' }).click();

    const row = page.getByRole('table', { name: 'API reference links' }).getByRole('row').filter({ hasText: 'Integration partner' });
    await row.waitFor();
    expect(await row.getByRole('cell').nth(5).textContent()).toBe('Active');
    await row.getByRole('button', { name: 'Revoke Integration partner' }).click();
    await page.getByRole('dialog', { name: 'Revoke API reference link?' }).getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.getByRole('cell').nth(5).textContent()).toBe('Revoked');
    const shares = (await t.api('GET', '/api/api-docs-shares')).json() as { name: string; active: boolean }[];
    expect(shares.find((s) => s.name === 'Integration partner')?.active).toBe(false);
    g.assertClean();
    await g.close();
  });
});

describe('an ordinary user', () => {
  it('is offered neither screen, and the APIs behind them answer 403', async () => {
    const g = await signedIn('ulla@example.test', PASSWORD, '/web#action=core.action_api_keys');
    const { page } = g;
    const nav = page.getByRole('navigation', { name: 'Main menu' });
    await nav.waitFor({ state: 'attached' });
    expect(await nav.getByRole('link', { name: 'API Keys' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'API Reference' }).count()).toBe(0);
    await page.getByRole('alert').filter({ hasText: 'not allowed' }).first().waitFor();
    const csrf = (await g.context.cookies()).find((c) => c.name === 'ff_csrf')!.value;
    for (const [method, url] of [['GET', '/api/api-keys'], ['POST', '/api/api-keys'], ['GET', '/api/api-docs-shares'], ['POST', '/api/api-docs-shares']] as const) {
      const status = await page.evaluate(async ([m, u, token]) => (await fetch(u, {
        method: m, headers: { 'content-type': 'application/json', 'x-csrf-token': token }, ...(m === 'POST' ? { body: '{"name":"x","groups":["core.group_admin"]}' } : {}),
      })).status, [method, url, csrf] as const);
      expect(status, `${method} ${url}`).toBe(403);
    }
    g.assertClean();
    await g.close();
  });
});
