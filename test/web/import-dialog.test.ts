/**
 * The import dialog (spec §4.8, CONTRACTS C3 "Import", issue 13 item 5) in Debian's Chromium: a
 * CSV uploaded from the list's `Import` is previewed by the server and each column shows the
 * field it suggests; `Test` is a dry run listing the refused rows by the file's line and column
 * while nothing is written; `Import` shows its progress bar and the result, the list reloads with
 * the new records, and `Download failed rows` gives the refused records with an `Error` column.
 * An XLSX written by the export route imports back through the browser's own XLSX reading.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { listHarness, recordRows } from './list-harness.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/web/import/tasks.csv', import.meta.url));

const h = listHarness(async ({ json }) => {
  await json('POST', '/api/bulk-create/ProjectTask', [{ name: 'Existing task' }]);
});
const { openList, countOf } = h;
const ARCH = [{ field: { name: 'name' } }, { field: { name: 'stage' } }, { field: { name: 'deadline' } }, { field: { name: 'planned_hours' } }];

describe('the import dialog', () => {
  it('previews a CSV with suggested fields, tests it (per-row errors, nothing written), imports it with progress, and gives the failed rows back', async () => {
    const g = await openList('project.action_project_tasks', { arch: ARCH });
    await expect.poll(() => recordRows(g).count()).toBe(1);
    await g.page.getByRole('button', { name: 'Import', exact: true }).click();
    const dialog = g.page.getByRole('dialog', { name: 'Import Tasks' });
    const previewed = g.page.waitForResponse((r) => r.url().endsWith('/api/import-preview/ProjectTask'));
    await dialog.getByLabel('File (CSV or XLSX)').setInputFiles(FIXTURE);
    expect((await previewed).status()).toBe(200);
    // The server's suggestions (headers equal to the fields' labels) are preselected.
    const mapping = { Name: 'name', 'Planned hours': 'planned_hours', Deadline: 'deadline', Stage: 'stage' };
    for (const [header, path] of Object.entries(mapping)) {
      await expect.poll(() => dialog.getByLabel(`Import column ${header} as`).inputValue()).toBe(path);
    }
    await expect(dialog.getByText('4 rows in tasks.csv.', { exact: false }).count()).resolves.toBe(1);
    const findings = await seriousViolations(g.page, { include: 'dialog' });
    expect(findings, describeFindings(findings)).toEqual([]);

    // Test: a dry run. The refused rows by the file's line (header = line 1) and column; nothing written.
    const tested = g.page.waitForRequest((r) => r.url().endsWith('/api/import/ProjectTask'));
    await dialog.getByRole('button', { name: 'Test', exact: true }).click();
    const testBody = JSON.parse((await tested).postData()!);
    expect(testBody).toMatchObject({ fields: ['name', 'planned_hours', 'deadline', 'stage'], dry_run: true, atomic: false, date_format: 'YYYY-MM-DD', match_fields: [] });
    expect(testBody.data).toEqual([
      ['name', 'planned_hours', 'deadline', 'stage'],
      ['Imported A', '2.5', '2030-01-15', 'New'],
      ['Imported B', '1', '2030-02-01', 'Nowhere'],
      ['Imported C, with a comma', '3', '2030-02-31', 'In Progress'],
      ['Imported D', '4', '2030-03-01', 'Review'],
    ]);
    const errors = dialog.getByRole('table', { name: 'Errors by row' }).locator('tbody tr');
    await expect.poll(() => errors.count()).toBe(2);
    const [first, second] = await errors.evaluateAll((rows) => rows.map((r) => [...(r as HTMLTableRowElement).cells].map((c) => c.textContent!.trim())));
    expect(first!.slice(0, 2)).toEqual(['3', 'Stage']);
    expect(first![2]).toMatch(/Nowhere/);
    expect(second!.slice(0, 2)).toEqual(['4', 'Deadline']);
    await expect(dialog.getByRole('alert').innerText()).resolves.toBe('Test found 2 errors in 4 rows (4 records): 2 would be created, 0 updated, 2 rows would not be imported. Nothing was imported.');
    expect(await countOf('ProjectTask')).toBe(1);

    // Import: the progress bar ends full, the result is told, the list behind reloads.
    await dialog.getByRole('button', { name: 'Import', exact: true }).click();
    const progress = dialog.getByRole('progressbar', { name: 'Import progress' });
    await expect.poll(() => dialog.getByRole('alert').innerText()).toBe('2 created, 0 updated; 2 rows not imported because of 2 errors: fix them in the failed-rows file and import it again.');
    await expect(progress.evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max])).resolves.toEqual([4, 4]);
    expect(await countOf('ProjectTask')).toBe(3);
    // The same rows are never sent twice; the focus is on the result, not lost with the disabled button.
    await expect(dialog.getByRole('button', { name: 'Import', exact: true }).isDisabled()).resolves.toBe(true);
    await expect(g.page.evaluate(() => document.activeElement?.textContent)).resolves.toMatch(/^2 created/);
    await expect.poll(() => recordRows(g).count()).toBe(3);

    const download = g.page.waitForEvent('download');
    await dialog.getByRole('button', { name: 'Download failed rows' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('tasks - failed rows.csv');
    const text = readFileSync((await file.path())!, 'utf8').replace(/^\ufeff/, '');
    const lines = text.trim().split('\r\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe('Name,Planned hours,Deadline,Stage,Error');
    expect(lines[1]).toMatch(/^Imported B,1,2030-02-01,Nowhere,"?Stage: .*Nowhere/);
    expect(lines[2]).toMatch(/^"Imported C, with a comma",3,2030-02-31,In Progress,"?Deadline: /);
    g.assertClean();
    await g.close();
  });

  it('imports an XLSX file (an import-compatible export of the list) read in the browser', async () => {
    const res = await h.t.api('POST', '/api/export/ProjectTask', { filter_str: "Q(name='Existing task')", fields: ['name', 'planned_hours'], import_compatible: true });
    expect(res.statusCode, res.body).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'ff-import-'));
    const path = join(dir, 'tasks.xlsx');
    writeFileSync(path, res.rawPayload);
    const g = await openList('project.action_project_tasks', { arch: ARCH });
    await g.page.getByRole('button', { name: 'Import', exact: true }).click();
    const dialog = g.page.getByRole('dialog', { name: 'Import Tasks' });
    await dialog.getByLabel('File (CSV or XLSX)').setInputFiles(path);
    await expect.poll(() => dialog.getByLabel('Import column name as').inputValue()).toBe('name');
    const imported = g.page.waitForRequest((r) => r.url().endsWith('/api/import/ProjectTask'));
    await dialog.getByRole('button', { name: 'Import', exact: true }).click();
    expect(JSON.parse((await imported).postData()!).data).toEqual([['name', 'planned_hours'], ['Existing task', 0]]);
    await expect.poll(() => dialog.getByRole('status').filter({ hasText: 'Imported' }).innerText()).toBe('Imported 1 row (1 record): 1 created, 0 updated.');
    g.assertClean();
    await g.close();
  });
});
