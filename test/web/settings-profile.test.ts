/**
 * My Profile in Debian's Chromium, through the real shell (CONTRACTS C2, spec §5): the language
 * saved for good; the password change with the rule (refusals at the input: `aria-invalid` and
 * the message linked by `aria-describedby`) and then working; two-factor enrolment with the QR
 * code from `/auth/2fa/setup`, a `PinInput` taking the app's code (a wrong one refused in place)
 * and the backup codes shown once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { totpCode } from '../../src/auth/totp.js';
import { Language } from '../../modules/core/models/language.js';
import { User } from '../../modules/core/models/user.js';
import { solvedAltcha } from '../support/altcha.js';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, signInContext, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let userId: number;
const EMAIL = 'pat@example.test';
const FIRST = 'copper-meadow-violin-17';
const SECOND = 'harbour-lantern-quartz-58';

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  const ids = await t.run(async () => Language.query('Q(code__in=["fr"])').with_archived().ids());
  for (const id of ids) expect((await t.api('PUT', `/api/update/Language/${id}`, { active: true })).statusCode).toBe(200);
  userId = await createUserWithPassword(t, { name: 'Pat Profile', email: EMAIL, password: FIRST, groups: ['core.group_user'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

const userFields = () => t.run(async () => (await User.query().filter({ id: userId }).read(['lang', 'totp_enabled']))[0]!);

async function signInStatus(password: string): Promise<number> {
  const altcha = await solvedAltcha(t.app, t.name);
  const res = await t.app.inject({
    method: 'POST', url: '/auth/authenticate', headers: { 'content-type': 'application/json', 'x-db-name': t.name },
    payload: JSON.stringify({ email: EMAIL, password, altcha }),
  });
  return res.statusCode;
}

/** The message an input's `aria-describedby` points at first (its error). */
async function describedText(page: Page, input: Locator): Promise<string | null> {
  const ids = await input.getAttribute('aria-describedby');
  return ids ? page.locator(`[id="${ids.split(' ')[0]}"]`).textContent() : null;
}

describe('My Profile', () => {
  it('saves the language, changes the password under the rule, enrols in the second factor', async () => {
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await signInContext(t, served, g.context, EMAIL, FIRST);
    const { page } = g;
    await page.goto('/web#action=core.action_profile');
    await page.getByRole('heading', { level: 1, name: 'My Profile' }).waitFor();

    // Language
    const language = page.getByLabel('Language');
    await expect.poll(async () => (await language.locator('option').allTextContents()).some((o) => o.endsWith('(fr)'))).toBe(true);
    await language.selectOption('fr');
    await page.getByRole('button', { name: 'Save language' }).click();
    await page.getByRole('button', { name: 'Reload' }).waitFor();
    expect((await userFields()).lang).toBe('fr');

    // Password: refusals at the input, then the change.
    const current = page.getByLabel('Current password');
    const next = page.getByLabel('New password');
    const repeat = page.getByLabel('Confirm password');
    const change = page.getByRole('button', { name: 'Change password' });
    await current.fill('not-my-password-at-all');
    await next.fill('short');
    await repeat.fill('short');
    await change.click();
    await expect.poll(() => next.getAttribute('aria-invalid')).toBe('true');
    expect(await describedText(page, next)).toBe('Password must be at least 12 characters long.');

    await next.fill(SECOND);
    await repeat.fill(SECOND);
    await change.click();
    await expect.poll(() => current.getAttribute('aria-invalid')).toBe('true');
    expect(await describedText(page, current)).toBe('The current password is not correct.');
    expect(await next.getAttribute('aria-invalid')).toBeNull();

    await current.fill(FIRST);
    await next.fill(EMAIL);
    await repeat.fill(EMAIL);
    await change.click();
    await expect.poll(() => next.getAttribute('aria-invalid')).toBe('true');
    expect(await describedText(page, next)).toBe('Password must not be the e-mail address, nor the part of it before the @.');
    expect(await current.getAttribute('aria-invalid')).toBeNull();

    await next.fill(SECOND);
    await repeat.fill(SECOND);
    await change.click();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    expect(await current.inputValue()).toBe('');
    expect(await signInStatus(SECOND)).toBe(200);
    expect(await signInStatus(FIRST)).toBe(401);

    // Second factor: QR code and key, a wrong code refused, the right one turns it on.
    const section = page.getByRole('region', { name: 'Two-factor authentication' });
    const setup = page.waitForResponse((r) => r.url().endsWith('/auth/2fa/setup'));
    await section.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    const { secret } = await (await setup).json() as { secret: string };
    const qr = section.getByRole('img', { name: 'QR code to scan with your authenticator app' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;/);
    expect(await qr.evaluate((img: HTMLImageElement) => img.naturalWidth > 0)).toBe(true);
    expect((await section.getByLabel('Setup key').textContent())?.replace(/ /g, '')).toBe(secret);

    const pin = section.getByRole('group', { name: 'Enter the 6-digit code the app shows' });
    await expect.poll(() => pin.getByRole('textbox').count()).toBe(6);
    const wrong = totpCode(secret) === '000000' ? '111111' : '000000';
    await pin.getByRole('textbox').first().click();
    await page.keyboard.type(wrong);
    await section.getByRole('alert').filter({ hasText: 'Invalid code' }).waitFor();
    expect((await userFields()).totp_enabled).toBe(false);

    await pin.getByRole('textbox').first().click();
    await page.keyboard.type(totpCode(secret));
    const codes = section.getByRole('list', { name: 'Backup codes' });
    await codes.waitFor();
    const shown = (await codes.getByRole('listitem').allTextContents()).map((c) => c.trim());
    expect(shown).toHaveLength(10);
    for (const code of shown) expect(code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(await section.textContent()).toContain('Shown only once.');
    expect((await userFields()).totp_enabled).toBe(true);
    await section.getByRole('button', { name: 'I have saved them' }).click();
    await codes.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(shown[0]!);
    expect(await section.getByRole('button', { name: 'Turn off two-factor authentication' }).count()).toBe(1);
    g.assertClean();
    await g.close();
  }, 90_000);

  it("an administrator resets someone's second factor from the Users form (the wizard's dialog confirms)", async () => {
    expect((await userFields()).totp_enabled).toBe(true);
    const g = await guardedPage(browser, served.baseUrl, { db: t.name });
    await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
    const { page } = g;
    await page.goto(`/web#action=core.action_users&view=form&id=${userId}`);
    await page.getByRole('button', { name: 'Reset second factor' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset second factor' });
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(async () => (await userFields()).totp_enabled).toBe(false);
    g.assertClean();
    await g.close();
  });
});
