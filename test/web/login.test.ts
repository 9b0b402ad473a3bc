/**
 * The sign-in page in Debian's Chromium (CONTRACTS C2, spec §5): e-mail, password, the `Altcha`
 * widget solving for real, "Sign in", the session in HttpOnly cookies; errors said in place; a
 * second factor through the `PinInput` or a backup code; `?next=` only to this site; `/` going
 * to the right page; the database chosen on the page when nothing else names it. TOTP codes
 * come from Debian's `oathtool`, never from the code under test.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { solvedAltcha } from '../support/altcha.js';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const run = promisify(execFile);

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
const PASSWORD = 'amber-kestrel-window-58';
let totpSecret = '';
let backupCodes: string[] = [];

async function oathtool(secret: string, at: Date): Promise<string> {
  const now = `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  const { stdout } = await run('/usr/bin/oathtool', ['--totp', '--base32', secret, '--now', now]);
  return stdout.trim();
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return served.app.inject({
    method: 'POST', url, headers: { 'content-type': 'application/json', 'x-db-name': t.name, ...headers }, payload: JSON.stringify(body),
  });
}

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  await createUserWithPassword(t, { name: 'Petra Plain', email: 'petra@example.test', password: PASSWORD, groups: ['core.group_user'] });
  await createUserWithPassword(t, { name: 'Toni Totp', email: 'toni@example.test', password: PASSWORD, groups: ['core.group_user'] });
  // Toni enrols in the second factor through the API.
  const session = (await post('/auth/authenticate', { email: 'toni@example.test', password: PASSWORD, altcha: await solvedAltcha(served.app, t.name) })).json();
  const auth = { authorization: `Bearer ${session.access_token}` };
  totpSecret = (await post('/auth/2fa/setup', {}, auth)).json().secret;
  const enabled = await post('/auth/2fa/enable', { code: await oathtool(totpSecret, new Date()) }, auth);
  expect(enabled.statusCode, enabled.body).toBe(200);
  backupCodes = enabled.json().backup_codes;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

/** Fills the sign-in form and presses "Sign in" (the widget holds the submit until it has solved). */
async function fillSignIn(g: GuardedPage, email: string, password: string): Promise<void> {
  await g.page.getByLabel('E-mail').fill(email);
  await g.page.getByLabel('Password').fill(password);
  await g.page.getByRole('button', { name: 'Sign in' }).click();
}

async function sessionCookies(g: GuardedPage) {
  return new Map((await g.context.cookies()).map((c) => [c.name, c]));
}

describe('sign-in page', () => {
  it('a wrong password is said in place; the right one lands on /web with HttpOnly session cookies; / then goes to the shell', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const { page } = g;
    await page.goto('/');
    await page.waitForURL(/\/web\/login$/);
    expect(await page.title()).toBe('Sign in · FieldForge');
    await fillSignIn(g, 'petra@example.test', 'not-her-password-at-all');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect((await alert.textContent())?.trim()).toBe('Invalid e-mail or password');
    expect(page.url()).toMatch(/\/web\/login$/);
    expect(await page.getByLabel('Password').inputValue()).toBe('');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/web$/);
    await page.getByRole('button', { name: 'Petra Plain' }).waitFor();
    const cookies = await sessionCookies(g);
    expect(cookies.get('ff_session')?.httpOnly).toBe(true);
    expect(cookies.get('ff_refresh')?.httpOnly).toBe(true);
    expect(cookies.get('ff_csrf')?.httpOnly).toBe(false);

    await page.goto('/');
    await page.waitForURL(/\/web$/);
    // Back on the sign-in page while signed in: straight on to the shell.
    await page.goto('/web/login');
    await page.waitForURL(/\/web$/);
    expect(g.consoleErrors.filter((m) => /Content Security Policy/i.test(m))).toEqual([]);
    g.assertClean();
    await g.close();
  });

  it('a refused proof of work says "Human verification failed." in place', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const { page } = g;
    // The browser's own request, its proof of work swapped for a forged one on the way out.
    await page.route('**/auth/authenticate', (route) => {
      const body = JSON.parse(route.request().postData() ?? '{}');
      return route.continue({ headers: { ...route.request().headers(), 'x-db-name': t.name }, postData: JSON.stringify({ ...body, altcha: 'forged' }) });
    });
    await page.goto('/web/login');
    await fillSignIn(g, 'petra@example.test', PASSWORD);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect((await alert.textContent())?.trim()).toBe('Human verification failed.');
    g.assertClean();
    await g.close();
  });

  it('?next= brings the person back to where they were; another site is never a destination', async () => {
    for (const [next, landing] of [['/web#action=core.action_users', '/web#action=core.action_users'], ['//evil.example/steal', '/web']] as const) {
      const g = await guardedPage(browser, served.baseUrl, { db: t.name });
      await g.page.goto(`/web/login?next=${encodeURIComponent(next)}`);
      await fillSignIn(g, 'petra@example.test', PASSWORD);
      await g.page.waitForURL((url) => url.pathname === '/web', { timeout: 15_000 });
      const url = new URL(g.page.url());
      expect(url.host, next).toBe(new URL(served.baseUrl).host);
      expect(url.pathname + url.hash, next).toBe(landing);
      if (next.startsWith('//')) {
        // The other spellings of another site, through the page's own rule.
        const candidates = ['https://evil.example/steal', '/\\evil.example', '/%5Cevil', 'javascript:alert(1)', '/web/login?next=/web', '/web?x=1#action=a', ' /web'];
        // (A string: vitest would rewrite a dynamic import written in a function.)
        const kept = await g.page.evaluate(`import('/web/client/shell/next-path.js').then((m) => ${JSON.stringify(candidates)}.map((c) => m.safeNextPath(c)))`);
        expect(kept).toEqual(['/web', '/web', '/%5Cevil', '/web', '/web', '/web?x=1#action=a', '/web']);
      }
      g.assertClean();
      await g.close();
    }
  });

  it('a user with a second factor continues with the PinInput (the code is sent when complete), or with a backup code', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    const { page } = g;
    await page.goto('/web/login');
    await fillSignIn(g, 'toni@example.test', PASSWORD);
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    // The enrolment spent the current step: the next one is within the window and unused.
    const code = await oathtool(totpSecret, new Date(Date.now() + 30_000));
    await page.locator('#ff-login-totp-0').waitFor();
    await page.keyboard.type(code);
    await page.waitForURL(/\/web$/);
    await page.getByRole('button', { name: 'Toni Totp' }).waitFor();
    g.assertClean();
    await g.close();

    const h = await guardedPage(browser, served.baseUrl, { db: t.name });
    await h.page.goto('/web/login');
    await fillSignIn(h, 'toni@example.test', PASSWORD);
    await h.page.getByRole('button', { name: 'Use a backup code instead' }).click();
    await h.page.getByLabel('Backup code').fill('ZZZZ-ZZZZ');
    await h.page.getByRole('button', { name: 'Verify' }).click();
    // A wrong code spends the sign-in: the page says so and asks for the password again.
    const alert = h.page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('That code was not accepted');
    expect(await h.page.getByLabel('E-mail').inputValue()).toBe('toni@example.test');
    await h.page.getByLabel('Password').fill(PASSWORD);
    await h.page.getByRole('button', { name: 'Sign in' }).click();
    await h.page.getByRole('button', { name: 'Use a backup code instead' }).click();
    await h.page.getByLabel('Backup code').fill(backupCodes[0]!);
    await h.page.getByRole('button', { name: 'Verify' }).click();
    await h.page.waitForURL(/\/web$/);
    await h.page.getByRole('button', { name: 'Toni Totp' }).waitFor();
    h.assertClean();
    await h.close();
  });

  it('with several databases and none named, the page offers them; the choice is remembered for the session\'s requests', async () => {
    // No X-DB-NAME header: 127.0.0.1 names no database and the test server holds several.
    const g = await guardedPage(browser, served.baseUrl, { dbHeader: false });
    const { page } = g;
    await page.goto('/web/login');
    await page.getByRole('heading', { name: 'Choose a database' }).waitFor();
    await page.getByLabel('Database').selectOption(t.name);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect((await page.locator('.ff-login__db').textContent())?.replace(/\s+/g, ' ')).toContain(`Database ${t.name}`);
    await fillSignIn(g, 'petra@example.test', PASSWORD);
    await page.waitForURL(/\/web$/);
    await page.getByRole('button', { name: 'Petra Plain' }).waitFor();
    expect((await sessionCookies(g)).get('ff_db')).toMatchObject({ value: t.name, httpOnly: true });
    g.assertClean();
    await g.close();
  });
});
