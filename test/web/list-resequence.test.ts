/**
 * Reordering list rows on a model with a `sequence` field (CONTRACTS C3 "Resequence", issue 13
 * item 5) in Debian's Chromium: a row dragged by its handle and a row moved with Alt+ArrowDown
 * each call `resequence` with the dropped record and the one it now follows, the page shows the
 * new order at once, and the order is the server's after a reload. Sorted by another column, the
 * handles are disabled and `Default order` brings them back.
 */
import { describe, expect, it } from 'vitest';
import { describeFindings, seriousViolations } from '../support/axe.js';
import { listHarness, recordRows } from './list-harness.js';

const h = listHarness(async ({ json }) => {
  const [project] = await json('POST', '/api/bulk-create/ProjectProject', [{ name: 'Ordering' }]);
  await json('POST', '/api/bulk-create/ProjectTask', ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo'].map((name) => ({ name, project: project.id })));
});
const { openList } = h;
const ARCH = [{ field: { name: 'name' } }, { field: { name: 'sequence' } }];

/** The names of the rows, top to bottom. */
const names = (g: Awaited<ReturnType<typeof openList>>) => recordRows(g).evaluateAll((rows) => rows.map((r) => (r as HTMLTableRowElement).cells[1]!.textContent!.trim()));

describe('reordering the rows of a list with a sequence', () => {
  it('drags a row by its handle: resequence is called, the page and the reloaded list show the new order', async () => {
    const g = await openList('project.action_project_tasks', { arch: ARCH });
    await expect.poll(() => names(g)).toEqual(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']);
    const findings = await seriousViolations(g.page, { include: 'table' });
    expect(findings, describeFindings(findings)).toEqual([]);
    const ids = await recordRows(g).evaluateAll((rows) => rows.map((r) => Number((r as HTMLElement).dataset.id)));
    const resequenced = g.page.waitForRequest((r) => r.url().endsWith('/api/resequence/ProjectTask'));
    const answered = g.page.waitForResponse((r) => r.url().endsWith('/api/resequence/ProjectTask'));
    // Echo's handle dropped on the upper half of Bravo's row: Echo goes between Alpha and Bravo.
    const handle = g.page.getByRole('button', { name: 'Move Echo' });
    const target = await recordRows(g).nth(1).boundingBox();
    const from = await handle.boundingBox();
    await g.page.mouse.move(from!.x + from!.width / 2, from!.y + from!.height / 2);
    await g.page.mouse.down();
    await g.page.mouse.move(from!.x + from!.width / 2, target!.y + target!.height / 2, { steps: 4 });
    await g.page.mouse.move(from!.x + from!.width / 2, target!.y + 3, { steps: 2 });
    await g.page.mouse.up();
    expect(JSON.parse((await resequenced).postData()!)).toEqual({ dropped_column_id: ids[4], after_column_id: ids[0], sequence_field: 'sequence' });
    expect((await answered).status()).toBe(200);
    await expect.poll(() => names(g)).toEqual(['Alpha', 'Echo', 'Bravo', 'Charlie', 'Delta']);
    // The sequence column shows the server's renumbering (1..N in the new order).
    await expect(recordRows(g).nth(1).locator('td').nth(2).innerText()).resolves.toBe('2');
    await g.close();

    const reloaded = await openList('project.action_project_tasks', { arch: ARCH });
    await expect.poll(() => names(reloaded)).toEqual(['Alpha', 'Echo', 'Bravo', 'Charlie', 'Delta']);
    g.assertClean();
    reloaded.assertClean();
    await reloaded.close();
  });

  it('moves the focused row with Alt+ArrowDown (the keyboard way), keeps the focus on it and says where it went', async () => {
    const g = await openList('project.action_project_tasks', { arch: ARCH });
    await expect.poll(() => recordRows(g).count()).toBe(5);
    const first = await names(g);
    const ids = await recordRows(g).evaluateAll((rows) => rows.map((r) => Number((r as HTMLElement).dataset.id)));
    const resequenced = g.page.waitForRequest((r) => r.url().endsWith('/api/resequence/ProjectTask'));
    await recordRows(g).first().focus();
    await g.page.keyboard.press('Alt+ArrowDown');
    expect(JSON.parse((await resequenced).postData()!)).toEqual({ dropped_column_id: ids[0], after_column_id: ids[1], sequence_field: 'sequence' });
    const expected = [first[1], first[0], ...first.slice(2)];
    await expect.poll(() => names(g)).toEqual(expected);
    await expect.poll(() => g.page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.id)).toBe(String(ids[0]));
    await expect(g.page.getByRole('status').filter({ hasText: 'moved to position 2 of 5' }).count()).resolves.toBe(1);
    await g.close();

    const reloaded = await openList('project.action_project_tasks', { arch: ARCH });
    await expect.poll(() => names(reloaded)).toEqual(expected);
    g.assertClean();
    await reloaded.close();
  });

  it('disables the handles while the list is sorted by another column; Default order brings them back', async () => {
    const g = await openList('project.action_project_tasks', { arch: ARCH, route: { order: 'name DESC' } });
    await expect.poll(() => recordRows(g).count()).toBe(5);
    const handle = g.page.getByRole('button', { name: /^Move / }).first();
    await expect(handle.getAttribute('aria-disabled')).resolves.toBe('true');
    await expect(handle.getAttribute('title')).resolves.toMatch(/Sorted by Name/);
    const sent: string[] = [];
    g.page.on('request', (r) => { if (r.url().includes('/api/resequence/')) sent.push(r.url()); });
    await recordRows(g).first().focus();
    await g.page.keyboard.press('Alt+ArrowDown');
    await g.page.getByRole('button', { name: 'Default order' }).click();
    await expect.poll(() => handle.getAttribute('aria-disabled')).toBeNull();
    expect(sent).toEqual([]);
    g.assertClean();
    await g.close();
  });
});
