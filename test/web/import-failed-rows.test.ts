/**
 * The import dialog's account of every row (issue 25 item 9), in Debian's Chromium: a file whose
 * second record lost its first cell. The record above it is imported, the headline counts rows and
 * records with each noun in its number, the failed-rows file holds exactly the refused row with its
 * error (never a row that was imported, never an empty error cell); with "Import nothing if any row
 * has an error", the test run's failed-rows file holds every row, the real error listed first.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Download } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { listHarness } from './list-harness.js';

const h = listHarness(async () => {});
const ARCH = [{ field: { name: 'name' } }, { field: { name: 'planned_hours' } }];

async function linesOf(download: Promise<Download>): Promise<string[]> {
  const file = await download;
  return readFileSync((await file.path())!, 'utf8').replace(/^\ufeff/, '').trim().split('\r\n');
}

describe('the import dialog accounts for every row', () => {
  it('imports the record above a row with a blank first cell, and gives back only that row, with its error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ff-import-rows-'));
    const path = join(dir, 'people.csv');
    writeFileSync(path, 'Name,Planned hours\r\nDan Import,1\r\n,2\r\nEve Import,3\r\n');
    const g = await h.openList('project.action_project_tasks', { arch: ARCH });
    await g.page.getByRole('button', { name: 'Import', exact: true }).click();
    const dialog = g.page.getByRole('dialog', { name: 'Import Tasks' });
    await dialog.getByLabel('File (CSV or XLSX)').setInputFiles(path);
    await expect.poll(() => dialog.getByLabel('Import column Name as').inputValue()).toBe('name');

    // All or nothing: the test run holds every other row back; the real error comes first.
    await dialog.getByLabel('Import nothing if any row has an error').check();
    await dialog.getByRole('button', { name: 'Test', exact: true }).click();
    await expect.poll(() => dialog.getByRole('alert').innerText()).toBe(
      'Test found 1 error in 3 rows (2 records): nothing would be imported (all or nothing); the other 2 rows would be held back. Nothing was imported.',
    );
    const cells = () => dialog.getByRole('table', { name: 'Errors by row' }).locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [...(r as HTMLTableRowElement).cells].map((c) => c.textContent!.trim())));
    const atomicRows = await cells();
    expect(atomicRows.map((r) => r.slice(0, 2))).toEqual([['3', 'Name'], ['2', ''], ['4', '']]);
    expect(atomicRows[1]![2]).toMatch(/all or nothing/);
    const all = await linesOf((async () => {
      const download = g.page.waitForEvent('download');
      await dialog.getByRole('button', { name: 'Download failed rows' }).click();
      return download;
    })());
    expect(all).toHaveLength(4);
    expect(all[0]).toBe('Name,Planned hours,Error');
    expect(all.slice(1).map((l) => l.split(',').slice(0, 2).join(','))).toEqual(['Dan Import,1', ',2', 'Eve Import,3']);
    for (const line of all.slice(1)) expect(line.split(',').slice(2).join(',').trim()).not.toBe('');

    // Row by row: Dan and Eve are imported, the blank-named row is the one refused.
    await dialog.getByLabel('Import nothing if any row has an error').uncheck();
    await dialog.getByRole('button', { name: 'Test', exact: true }).click();
    await expect.poll(() => dialog.getByRole('alert').innerText()).toBe(
      'Test found 1 error in 3 rows (2 records): 2 would be created, 0 updated, 1 row would not be imported. Nothing was imported.',
    );
    await dialog.getByRole('button', { name: 'Import', exact: true }).click();
    await expect.poll(() => dialog.getByRole('alert').innerText()).toBe(
      '2 created, 0 updated; 1 row not imported because of 1 error: fix them in the failed-rows file and import it again.',
    );
    expect(await h.countOf('ProjectTask', { filter_str: "Q(name__in=['Dan Import', 'Eve Import'])" })).toBe(2);
    const failed = await linesOf((async () => {
      const download = g.page.waitForEvent('download');
      await dialog.getByRole('button', { name: 'Download failed rows' }).click();
      return download;
    })());
    expect(failed).toHaveLength(2);
    expect(failed[1]).toMatch(/^,2,"?Name: This row's first column \('name'\) is blank/);
    g.assertClean();
    await g.close();
  });
});
