/**
 * A module's own web assets (issue 26 item 6, CONTRACTS C2): the project module ships
 * `modules/project/web/index.js`, which registers the `progress` field widget in the client's
 * registry (`registry.field`) after the core widgets; the task form's arch asks for it on the
 * effective hours. In Debian's Chromium against the real server: the client loads the module's
 * entry at start, the widget draws the hours against the planned ones and follows what is typed
 * before saving, the save stores the values, and the form stays free of serious accessibility
 * findings and usable at 360 px.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator } from 'playwright-core';
import { guardedPage, launchBrowser, serveApp, signInContext, type GuardedPage, type ServedApp } from '../support/browser.js';
import { seriousViolations } from '../support/axe.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { readRecord } from './form-steps.js';

let t: TestDatabase;
let served: ServedApp;
let browser: Browser;
let task: number;

beforeAll(async () => {
  t = await testDatabase('full');
  [served, browser] = await Promise.all([serveApp(t), launchBrowser()]);
  const res = await t.api('POST', '/api/create/ProjectTask', { name: 'Write the user guide', planned_hours: 8, effective_hours: 2 });
  expect(res.statusCode, res.body).toBe(200);
  task = (JSON.parse(res.body) as { id: number }).id;
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
  await t?.close();
});

async function taskForm(width?: number): Promise<GuardedPage & { requested: string[] }> {
  const g = await guardedPage(browser, served.baseUrl, { db: t.name, context: width ? { viewport: { width, height: 740 } } : {} });
  const requested: string[] = [];
  g.page.on('request', (r) => requested.push(new URL(r.url()).pathname));
  await signInContext(t, served, g.context, 'admin@example.com', 'admin-password-for-tests');
  await g.page.goto(`/web#action=project.action_project_tasks&view=form&id=${task}`);
  await g.page.getByLabel('Name', { exact: true }).waitFor();
  return { ...g, requested };
}

const BAR = { name: 'Effective hours against Planned hours' };

/** What the bar shows (its properties: the attribute may lag behind a clamped value). */
const shown = (bar: Locator) => bar.evaluate((el: HTMLProgressElement) => `${el.value} of ${el.max}`);

describe('a widget from a module’s web assets', () => {
  it('is loaded at start after the core widgets, draws the hours against the planned ones, follows edits, and saves', async () => {
    const g = await taskForm();
    const { page } = g;
    expect(g.requested).toContain('/web/modules/project/index.js');
    expect(g.requested).toContain('/web/modules/project/progress-field.css');
    // The module registered into the client's own registry, after the core widgets.
    // (A string: the test runner would rewrite an `import()` written in a function.)
    const names = await page.evaluate(`import('/web/client/registry.js').then((m) => m.registry.fieldNames())`) as string[];
    expect(names[0]).toBe('Char');
    expect(names.at(-1)).toBe('progress');
    expect(names).toEqual(expect.arrayContaining(['statusbar', 'priority', 'badge', 'tags']));

    const bar = page.getByRole('progressbar', BAR);
    const spent = page.getByLabel('Effective hours', { exact: true });
    await expect.poll(() => shown(bar)).toBe('2 of 8');
    const words = page.getByText('25 % of Planned hours (8.00)');
    await words.waitFor();
    // The words describe the input the person types into.
    const describedBy = (await spent.getAttribute('aria-describedby'))!.split(' ');
    expect(describedBy).toContain(await words.getAttribute('id'));
    expect(await spent.inputValue()).toBe('2.00');

    // Typed, not yet saved: the bar follows the input, and the planned hours it is measured against.
    await spent.fill('6');
    await spent.blur();
    await expect.poll(() => shown(bar)).toBe('6 of 8');
    await page.getByText('75 % of Planned hours (8.00)').waitFor();
    const planned = page.getByLabel('Planned hours', { exact: true });
    await planned.fill('4');
    await planned.blur();
    await page.getByText('150 % of Planned hours (4.00)').waitFor();
    expect(await shown(bar)).toBe('4 of 4');

    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await readRecord(t, 'ProjectTask', task, ['effective_hours', 'planned_hours']))).toMatchObject({ effective_hours: 6, planned_hours: 4 });
    await expect.poll(() => page.getByRole('button', { name: 'Discard' }).isDisabled()).toBe(true);

    expect(await seriousViolations(page)).toEqual([]);
    g.assertClean();
    expect(g.consoleErrors).toEqual([]);
    await g.close();
  });

  it('fits a 360 px wide screen', async () => {
    const g = await taskForm(360);
    const { page } = g;
    const bar = page.getByRole('progressbar', BAR);
    await bar.waitFor();
    const box = (await bar.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(360);
    expect(box.width).toBeGreaterThan(40);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    expect(await seriousViolations(page)).toEqual([]);
    g.assertClean();
    await g.close();
  });
});
