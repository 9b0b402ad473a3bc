/**
 * The app shell in Debian's Chromium (CONTRACTS C2): the database's menus in sequence order and
 * only those the user may open, shareable URLs that survive a reload, the browser's Back, the
 * command palette (Ctrl+K, type, Enter), the page's language from the user's, the menu behind a
 * button at 360 px, and a strict CSP the page lives with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Language } from '../../modules/core/models/language.js';
import { createUserWithPassword, guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
const PASSWORD = 'copper-meadow-violin-17';

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  const ids = await t.run(async () => Language.query('Q(code__in=["fr"])').with_archived().ids());
  for (const id of ids) expect((await t.api('PUT', `/api/update/Language/${id}`, { active: true })).statusCode).toBe(200);
  await createUserWithPassword(t, { name: 'Ulla User', email: 'ulla@example.test', password: PASSWORD, groups: ['core.group_user'] });
  await createUserWithPassword(t, { name: 'Fabien', email: 'fabien@example.test', password: PASSWORD, groups: ['core.group_user', 'core.group_admin', 'contacts.group_contacts_user'], lang: 'fr' });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

/** A page signed in as `email`, on `/web` (or `path`), once the shell has drawn its menu. */
async function shellAs(email: string, password: string, path = '/web', viewport?: { width: number; height: number }): Promise<GuardedPage> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: viewport ? { viewport } : {} });
  await signInContext(t, served, g.context, email, password);
  await g.page.goto(path);
  // The menu may be folded away (narrow screens): the palette button is always there.
  await g.page.getByRole('button', { name: 'Search menus' }).waitFor();
  return g;
}

/** The menu's link and section names, top to bottom. */
function menuNames(page: Page): Promise<string[]> {
  return page.getByRole('navigation', { name: 'Main menu' }).locator('a, button').allTextContents().then((all) => all.map((s) => s.trim()));
}

function cspViolations(g: GuardedPage): string[] {
  return g.consoleErrors.filter((m) => /Content Security Policy/i.test(m));
}

describe('the shell', () => {
  it('shows the menus in sequence order; a menu link opens its action in the address, which a reload and Back keep', async () => {
    const g = await shellAs('admin@example.com', 'admin-password-for-tests');
    const { page } = g;
    const nav = page.getByRole('navigation', { name: 'Main menu' });
    // Top-level menus by sequence (20, 30, 1000), each section's menus by theirs.
    expect((await nav.locator('.ff-main-menu__heading').allTextContents()).map((s) => s.trim())).toEqual(['Contacts', 'Project', 'Settings']);
    expect((await menuNames(page)).slice(0, 8)).toEqual(['Contacts', 'Contacts', 'Tags', 'Project', 'Tasks', 'Projects', 'Stages', 'Tags']);
    const settings = nav.getByRole('button', { name: 'Settings' });
    expect(await settings.getAttribute('aria-expanded')).toBe('true');
    expect(await nav.getByRole('link', { name: 'Users' }).isVisible()).toBe(true);
    await settings.click();
    await expect.poll(() => settings.getAttribute('aria-expanded')).toBe('false');
    await expect.poll(() => nav.getByRole('link', { name: 'Users' }).isVisible()).toBe(false);
    await settings.click();
    // The home page offers each top-level menu.
    await expect.poll(() => page.getByRole('heading', { name: 'Welcome, Administrator' }).count()).toBe(1);

    await page.getByRole('link', { name: 'Projects' }).click();
    await page.waitForURL(/#action=project\.action_project_projects$/);
    const projects = page.getByRole('link', { name: 'Projects' });
    expect(await projects.getAttribute('aria-current')).toBe('page');
    await expect.poll(() => page.title()).toBe('Projects · FieldForge');
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
    expect((await crumbs.textContent())?.replace(/\s+/g, ' ')).toContain('Project');

    await page.getByRole('link', { name: 'Users' }).click();
    await page.waitForURL(/#action=core\.action_users$/);
    await page.reload();
    await page.getByRole('navigation', { name: 'Main menu' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#action=core.action_users');
    await expect.poll(() => page.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page');
    await expect.poll(() => page.title()).toBe('Users · FieldForge');

    await page.goBack();
    await page.waitForURL(/#action=project\.action_project_projects$/);
    await expect.poll(() => page.getByRole('link', { name: 'Projects' }).getAttribute('aria-current')).toBe('page');
    await expect.poll(() => page.title()).toBe('Projects · FieldForge');

    // A shared address of a record opens the form of that action.
    await page.goto('/web#action=contacts.action_contacts&view=form&id=1');
    await expect.poll(async () => (await crumbs.textContent())?.replace(/\s+/g, ' ').trim()).toMatch(/^Contacts\s*Contacts\s*#1$/);
    expect(await crumbs.getByRole('link', { name: 'Contacts' }).getAttribute('href')).toBe('#action=contacts.action_contacts');

    expect(cspViolations(g)).toEqual([]);
    g.assertClean();
    await g.close();
  });

  it('asks before leaving unsaved edits: a menu or Back waits for "Discard changes"; "Stay" keeps the view and its address', async () => {
    const g = await shellAs('admin@example.com', 'admin-password-for-tests', '/web#action=core.action_companies');
    const { page } = g;
    await page.getByRole('link', { name: 'Users' }).click();
    await page.waitForURL(/#action=core\.action_users$/);
    // The view holding edits (the form) registers its guard through the shared module.
    // (A string: vitest would rewrite a dynamic import written in a function.)
    await page.evaluate("import('/web/client/leave-guard.js').then((m) => m.setLeaveGuard(() => true))");
    const question = page.getByRole('dialog', { name: 'Discard unsaved changes?' });
    await page.getByRole('link', { name: 'Modules' }).click();
    await question.getByRole('button', { name: 'Stay' }).click();
    await question.waitFor({ state: 'detached' });
    expect(new URL(page.url()).hash).toBe('#action=core.action_users');

    await page.goBack();
    await question.getByRole('button', { name: 'Stay' }).click();
    await expect.poll(() => new URL(page.url()).hash).toBe('#action=core.action_users');
    expect(await page.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page');

    await page.getByRole('link', { name: 'Modules' }).click();
    await question.getByRole('button', { name: 'Discard changes' }).click();
    await page.waitForURL(/#action=core\.action_modules$/);
    // Discarded: the next move asks nothing.
    await page.getByRole('link', { name: 'Companies' }).click();
    await page.waitForURL(/#action=core\.action_companies$/);
    expect(await question.count()).toBe(0);
    g.assertClean();
    await g.close();
  });

  it('an action the user may not open says so in place; the menu never offers it', async () => {
    const g = await shellAs('ulla@example.test', PASSWORD, '/web#action=contacts.action_contacts');
    const { page } = g;
    // core.group_user reads no contact, and the Settings actions are the administrators' (WindowAction.groups).
    expect(await menuNames(page)).toEqual([]);
    const alert = page.getByRole('alert').filter({ hasText: 'This page cannot be opened' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('You are not allowed to read Contact records');
    g.assertClean();
    await g.close();
  });

  it('Ctrl+K opens the palette: typing filters the menus, arrows move, Enter opens the one chosen', async () => {
    const g = await shellAs('admin@example.com', 'admin-password-for-tests');
    const { page } = g;
    await page.keyboard.press('Control+k');
    const dialog = page.getByRole('dialog', { name: 'Go to' });
    await dialog.waitFor();
    const box = dialog.getByRole('combobox', { name: 'Search menus' });
    await expect.poll(() => box.evaluate((el) => el === document.activeElement)).toBe(true);
    await box.fill('tags');
    const options = dialog.getByRole('listbox', { name: 'Menus' }).getByRole('option');
    await expect.poll(() => options.allTextContents()).toEqual(['TagsContacts / Configuration', 'TagsProject / Configuration']);
    expect(await options.nth(0).getAttribute('aria-selected')).toBe('true');
    await box.press('ArrowDown');
    expect(await options.nth(1).getAttribute('aria-selected')).toBe('true');
    expect(await box.getAttribute('aria-activedescendant')).toBe(await options.nth(1).getAttribute('id'));
    await box.press('Enter');
    await page.waitForURL(/#action=project\.action_project_tags$/);
    await dialog.waitFor({ state: 'detached' });

    // Words match anywhere in the path; Escape closes without moving.
    await page.keyboard.press('Control+k');
    await box.fill('set us');
    await expect.poll(() => options.allTextContents()).toEqual(['UsersSettings']);
    await box.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(new URL(page.url()).hash).toBe('#action=project.action_project_tags');
    await page.keyboard.press('Control+k');
    await box.fill('set us');
    await box.press('Enter');
    await page.waitForURL(/#action=core\.action_users$/);
    g.assertClean();
    await g.close();
  });

  it('takes the page language from the user\'s lang, menus translated', async () => {
    const g = await shellAs('fabien@example.test', PASSWORD);
    const { page } = g;
    await expect.poll(() => page.evaluate(() => document.documentElement.lang)).toBe('fr');
    await page.getByRole('button', { name: 'Paramètres' }).waitFor();
    expect(await page.getByRole('link', { name: 'Utilisateurs' }).count()).toBe(1);
    g.assertClean();
    await g.close();
  });

  it('at 360 px the menu folds behind a button with aria-expanded; choosing a menu folds it again', async () => {
    const g = await shellAs('admin@example.com', 'admin-password-for-tests', '/web', { width: 360, height: 740 });
    const { page } = g;
    const toggle = page.getByRole('button', { name: 'Menu', exact: true });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByRole('link', { name: 'Projects' }).isVisible()).toBe(false);
    await toggle.click();
    await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('true');
    await page.getByRole('link', { name: 'Projects' }).click();
    await page.waitForURL(/#action=project\.action_project_projects$/);
    await expect.poll(() => toggle.getAttribute('aria-expanded')).toBe('false');
    // Nothing sticks out sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    g.assertClean();
    await g.close();
  });

  it('the user menu opens the own profile, and signing out ends the session and goes to the sign-in page', async () => {
    const g = await shellAs('ulla@example.test', PASSWORD);
    const { page, context } = g;
    // Any user, without a Settings menu, reaches their own profile from the user menu.
    await page.getByRole('button', { name: 'Ulla User' }).click();
    await page.getByRole('link', { name: 'My profile' }).click();
    await page.waitForURL(/#action=core\.action_profile$/);
    await page.getByRole('heading', { name: 'My Profile' }).waitFor();
    await page.getByRole('button', { name: 'Ulla User' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/web\/login$/);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const names = (await context.cookies()).map((c) => c.name);
    expect(names.filter((n) => n.startsWith('ff_') && n !== 'ff_db')).toEqual([]);
    // Signed out, the shell sends the browser to sign in and back.
    await page.goto('/web#action=core.action_users');
    await page.waitForURL((url) => url.pathname === '/web/login' && url.searchParams.get('next') === '/web#action=core.action_users');
    g.assertClean();
    await g.close();
  });
});
