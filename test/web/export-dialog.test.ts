/**
 * Export from a list (CONTRACTS C3 "Export", issue 13 item 5) in Debian's Chromium: the toolbar's
 * `Export` sends the list's whole match (its search, no ids), the selection bar's sends the ticked
 * ids, each with the chosen field paths; the XLSX downloads under the server's file name; a
 * template (import-compatible, a path through a relation) is saved on the server and reapplied
 * in another browser session. The dialog passes axe and stays within a 360 px screen.
 */
import { describe, expect, it } from 'vitest';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { listHarness, pad, recordRows } from './list-harness.js';

const h = listHarness(async ({ json }) => {
  const [project] = await json('POST', '/api/bulk-create/ProjectProject', [{ name: 'Export project' }]);
  await json('POST', '/api/bulk-create/ProjectTask', Array.from({ length: 12 }, (_, i) => ({ name: `Task ${pad(i + 1)}`, project: project.id, planned_hours: i + 1 })));
});
const { openList } = h;
const ARCH = [{ field: { name: 'name' } }, { field: { name: 'project' } }, { field: { name: 'planned_hours' } }];
const EXPORT_URL = '/api/export/ProjectTask';

describe('the export dialog', () => {
  it('exports every record the list matches: its search, the chosen fields, the file under the server\'s name', async () => {
    const g = await openList('project.action_project_tasks', { arch: ARCH });
    await g.page.getByRole('searchbox', { name: 'Search' }).fill('Task 00');
    await g.page.getByRole('searchbox', { name: 'Search' }).press('Enter');
    await expect.poll(() => recordRows(g).count()).toBe(9);
    await g.page.getByRole('button', { name: 'Export', exact: true }).click();
    const dialog = g.page.getByRole('dialog', { name: 'Export Tasks' });
    await expect.poll(() => dialog.getByText('Every record this list matches (9).').count()).toBe(1);
    const chosen = dialog.getByRole('list', { name: /Fields to export/ }).getByRole('listitem');
    await expect.poll(() => chosen.allInnerTexts()).toEqual([expect.stringContaining('Name'), expect.stringContaining('Project'), expect.stringContaining('Planned hours')]);
    // Remove a column, add another, put it first.
    await dialog.getByRole('button', { name: 'Remove Planned hours' }).click();
    await dialog.getByRole('searchbox', { name: 'Search fields' }).fill('deadline');
    await dialog.getByRole('button', { name: 'Add Deadline' }).click();
    await dialog.getByRole('button', { name: 'Move Deadline up' }).click();
    await dialog.getByRole('button', { name: 'Move Deadline up' }).click();
    const findings = await seriousViolations(g.page, { include: 'dialog' });
    expect(findings, describeFindings(findings)).toEqual([]);

    const requested = g.page.waitForRequest((r) => r.url().endsWith(EXPORT_URL));
    const answered = g.page.waitForResponse((r) => r.url().endsWith(EXPORT_URL));
    const download = g.page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Export', exact: true }).click();
    expect(JSON.parse((await requested).postData()!)).toEqual({ name_search: ['Task', '00'], order_by: ['sequence ASC', 'deadline ASC', 'id ASC'], fields: ['deadline', 'name', 'project'], import_compatible: false });
    const response = await answered;
    expect(response.status()).toBe(200);
    const disposition = response.headers()['content-disposition'] ?? '';
    const serverName = /filename="([^"]+)"/.exec(disposition)?.[1];
    expect(serverName).toMatch(/^Task \d{4}-\d{2}-\d{2}\.xlsx$/);
    expect((await download).suggestedFilename()).toBe(serverName);
    await dialog.waitFor({ state: 'detached' });
    g.assertClean();
    await g.close();
  });

  it('exports the ticked rows by id from the selection bar', async () => {
    const g = await openList('project.action_project_tasks', { arch: ARCH });
    await expect.poll(() => recordRows(g).count()).toBe(12);
    await g.page.getByLabel('Select Task 003').check();
    await g.page.getByLabel('Select Task 007').check();
    const ids = await Promise.all([2, 6].map((i) => recordRows(g).nth(i).getAttribute('data-id').then(Number)));
    await g.page.getByRole('region', { name: 'Selection' }).getByRole('button', { name: 'Export' }).click();
    const dialog = g.page.getByRole('dialog', { name: 'Export Tasks' });
    await expect.poll(() => dialog.getByText('The 2 selected records.').count()).toBe(1);
    const requested = g.page.waitForRequest((r) => r.url().endsWith(EXPORT_URL));
    const download = g.page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Export', exact: true }).click();
    expect(JSON.parse((await requested).postData()!)).toEqual({ ids, order_by: ['sequence ASC', 'deadline ASC', 'id ASC'], fields: ['name', 'project', 'planned_hours'], import_compatible: false });
    expect((await download).suggestedFilename()).toMatch(/\.xlsx$/);
    g.assertClean();
    await g.close();
  });

  it('saves an import-compatible template on the server and reapplies it in another session', async () => {
    const g = await openList('project.action_project_tasks', { arch: ARCH });
    await g.page.getByRole('button', { name: 'Export', exact: true }).click();
    let dialog = g.page.getByRole('dialog', { name: 'Export Tasks' });
    await dialog.getByRole('checkbox', { name: 'Import-compatible export' }).check();
    for (const label of ['Project', 'Planned hours']) await dialog.getByRole('button', { name: `Remove ${label}` }).click();
    // A path through a relation: the project by its name.
    await dialog.getByRole('button', { name: 'Fields of Project' }).click();
    await dialog.getByRole('button', { name: 'Add Project / Name' }).click();
    await dialog.getByLabel('Template name').fill('Tasks for re-import');
    const saved = g.page.waitForResponse((r) => r.url().endsWith('/api/create/ExportPreset'));
    await dialog.getByRole('button', { name: 'Save template' }).click();
    expect((await saved).status()).toBe(200);
    await expect.poll(() => dialog.getByLabel('Template', { exact: true }).inputValue()).not.toBe('');
    await g.close();
    // Templates are personal: the administrator's API key (its own service account) does not see it.
    expect(await h.json('POST', '/api/query/ExportPreset', { fields: ['name'] })).toEqual([]);

    // Another browser context: what comes back was stored on the server, not in this page.
    const again = await openList('project.action_project_tasks', { arch: ARCH });
    await again.page.getByRole('button', { name: 'Export', exact: true }).click();
    dialog = again.page.getByRole('dialog', { name: 'Export Tasks' });
    await expect.poll(() => dialog.getByLabel('Template', { exact: true }).locator('option').allInnerTexts()).toContain('Tasks for re-import');
    await dialog.getByLabel('Template', { exact: true }).selectOption({ label: 'Tasks for re-import' });
    await expect.poll(() => dialog.getByRole('list', { name: /Fields to export/ }).getByRole('listitem').allInnerTexts())
      .toEqual([expect.stringContaining('name'), expect.stringContaining('project/name')]);
    await expect(dialog.getByRole('checkbox', { name: 'Import-compatible export' }).isChecked()).resolves.toBe(true);
    const requested = again.page.waitForRequest((r) => r.url().endsWith(EXPORT_URL));
    const download = again.page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Export', exact: true }).click();
    expect(JSON.parse((await requested).postData()!)).toEqual({ order_by: ['sequence ASC', 'deadline ASC', 'id ASC'], fields: ['name', 'project/name'], import_compatible: true });
    await download;
    again.assertClean();
    await again.close();
  });

  it('fits a 360 px screen: nothing of the dialog reaches past the right edge', async () => {
    const g = await openList('project.action_project_tasks', { arch: ARCH, width: 360 });
    await g.page.getByRole('button', { name: 'Export', exact: true }).click();
    const dialog = g.page.getByRole('dialog', { name: 'Export Tasks' });
    await dialog.getByRole('button', { name: 'Export', exact: true }).waitFor();
    for (const name of ['Export', 'Cancel', 'Save template']) {
      const box = await dialog.getByRole('button', { name, exact: true }).boundingBox();
      expect(box!.x + box!.width, name).toBeLessThanOrEqual(360);
    }
    expect(await g.page.evaluate(() => document.querySelector('dialog')!.getBoundingClientRect().right)).toBeLessThanOrEqual(360);
    g.assertClean();
    await g.close();
  });
});
