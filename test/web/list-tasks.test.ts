/**
 * The list view on project tasks in Debian's Chromium: grouping by a field with counts and sums
 * (a group opened a page at a time, totals over every match), the model's wizard run on the
 * ticked rows, actions offered by the caller's rights, and the layout 360 px wide.
 */
import { describe, expect, it } from 'vitest';
import { createUserWithPassword, guardedPage, signInContext } from '../support/browser.js';
import { ADMIN, firstName, listHarness, pad, pagerText, recordRows } from './list-harness.js';

const h = listHarness(async ({ json }) => {
  await json('POST', '/api/bulk-create/Contact', [{ name: 'Person 010' }, { name: 'Person 011' }]);
  const [project] = await json('POST', '/api/bulk-create/ProjectProject', [{ name: 'Website' }]);
  const stages = await json('POST', '/api/query/ProjectStage', { fields: ['name'], order_by: ['sequence ASC'] });
  await json('POST', '/api/bulk-create/ProjectTask', Array.from({ length: 30 }, (_, i) => ({
    name: `Task ${pad(i + 1)}`,
    project: project.id,
    stage: stages[i % 3].id,
    planned_hours: (i % 3) + 1.5,
  })));
});
const { json, openList } = h;

describe('the list view of project tasks', () => {
  it('groups by a field with counts and sums, opens a group a page at a time, and totals every match', async () => {
    const arch = [{ field: { name: 'name' } }, { field: { name: 'stage', properties: { widget: 'badge' } } }, { field: { name: 'planned_hours' } }];
    const g = await openList('project.action_project_tasks', { arch });
    await expect.poll(() => pagerText(g).innerText()).toBe('1–30 / 30');
    await expect(g.page.locator('tfoot').innerText()).resolves.toMatch(/Total\s+75\.00/);
    await g.page.getByLabel('Group by').selectOption({ label: 'Stage' });
    await expect.poll(() => g.page.locator('tr.ff-list-group').count()).toBe(3);
    const grouped = g.queries.at(-1)!;
    expect(grouped).toMatchObject({ group_fields: ['stage'], footer_aggregates: ['planned_hours'] });
    expect(grouped.limit).toBeLessThanOrEqual(80);
    const groupRows = g.page.locator('tr.ff-list-group');
    await expect(groupRows.allInnerTexts()).resolves.toEqual([
      expect.stringMatching(/New\s*\(10\)\s*15\.00/),
      expect.stringMatching(/In Progress\s*\(10\)\s*25\.00/),
      expect.stringMatching(/Review\s*\(10\)\s*35\.00/),
    ]);
    await expect(pagerText(g).innerText()).resolves.toBe('30 records');
    await expect(recordRows(g).count()).resolves.toBe(0);
    const review = g.page.getByRole('button', { name: /^Review/ });
    await expect(review.getAttribute('aria-expanded')).resolves.toBe('false');
    await review.click();
    await expect.poll(() => recordRows(g).count()).toBe(10);
    await expect(review.getAttribute('aria-expanded')).resolves.toBe('true');
    const opened = g.queries.at(-1)!;
    expect(opened.filter_str).toMatch(/^Q\(stage=\d+\)$/);
    expect(opened.limit).toBe(80);
    await expect(recordRows(g).first().innerText()).resolves.toContain('Review');
    await expect(g.page.locator('tfoot').innerText()).resolves.toMatch(/Total\s+75\.00/);
    for (const q of g.queries) expect(q.limit).toBeLessThanOrEqual(80);
    g.assertClean();
    await g.close();
  });

  it('runs the model\'s wizard on the ticked tasks (Reassign tasks) and reloads', async () => {
    const g = await openList('project.action_project_tasks');
    await g.page.getByLabel('Select Task 001').check();
    await g.page.getByLabel('Select Task 002').check();
    await g.page.getByRole('button', { name: 'Reassign tasks' }).click();
    const dialog = g.page.getByRole('dialog', { name: 'Reassign tasks' });
    await dialog.getByRole('combobox', { name: 'Assign to' }).fill('Person 010');
    await dialog.getByRole('option', { name: 'Person 010' }).click();
    const executed = g.page.waitForRequest((r) => r.url().endsWith('/api/execute/ProjectTask/action_reassign'));
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    const ids = await recordRows(g).evaluateAll((rows) => rows.slice(0, 2).map((r) => Number((r as HTMLElement).dataset.id)));
    expect(JSON.parse((await executed).postData()!).ids).toEqual(ids);
    await expect.poll(() => dialog.count()).toBe(0);
    const [person] = await json('POST', '/api/query/Contact', { fields: ['name'], filter_str: "Q(name='Person 010')" });
    const tasks = await json('POST', '/api/query/ProjectTask', { fields: ['name', 'assignee'], filter_str: `Q(assignee=${person.id})` });
    expect(tasks.map((x: { name: string }) => x.name).sort()).toEqual(['Task 001', 'Task 002']);
    await expect.poll(() => recordRows(g).first().innerText()).toContain('Person 010');
    await expect(g.page.getByLabel('Select Task 001').isChecked()).resolves.toBe(false);
    g.assertClean();
    await g.close();
  });

  it('prints the model\'s report for the ticked tasks: the document downloads', async () => {
    const g = await openList('project.action_project_tasks');
    await g.page.getByLabel('Select Task 005').check();
    const requested = g.page.waitForRequest((r) => r.url().endsWith('/api/generate_report'));
    const download = g.page.waitForEvent('download');
    await g.page.getByRole('button', { name: 'Print Task Sheet' }).click();
    const id = Number(await recordRows(g).nth(4).getAttribute('data-id'));
    expect(JSON.parse((await requested).postData()!)).toEqual({ model: 'ProjectTask', report_id: 'project.report_project_task', selection: { ids: [id] } });
    expect((await download).suggestedFilename()).toBe('Task Task 005.pdf');
    g.assertClean();
    await g.close();
  });

  it('works inside the /web shell: the order survives a reload in the URL, a row click opens the form', async () => {
    const g = await guardedPage(h.browser, h.served.baseUrl, { db: h.t.name });
    await signInContext(h.t, h.served, g.context, ADMIN.email, ADMIN.password);
    await g.page.goto('/web#action=project.action_project_tasks');
    await expect.poll(() => recordRows(g).count(), { timeout: 15_000 }).toBe(30);
    await g.page.getByRole('columnheader', { name: 'Name' }).getByRole('button').click();
    await expect.poll(() => new URL(g.page.url()).hash).toBe('#action=project.action_project_tasks&view=list&order=name+ASC');
    await g.page.getByRole('columnheader', { name: 'Name' }).getByRole('button').click();
    await expect.poll(() => new URL(g.page.url()).hash).toBe('#action=project.action_project_tasks&view=list&order=name+DESC');
    await expect.poll(() => firstName(g).innerText()).toBe('Task 030');
    await g.page.reload();
    await expect.poll(() => pagerText(g).innerText(), { timeout: 15_000 }).toBe('1–30 / 30');
    await expect(g.page.getByRole('columnheader', { name: 'Name' }).getAttribute('aria-sort')).resolves.toBe('descending');
    await expect(firstName(g).innerText()).resolves.toBe('Task 030');
    const id = await recordRows(g).first().getAttribute('data-id');
    await firstName(g).click();
    await expect.poll(() => new URL(g.page.url()).hash).toBe(`#action=project.action_project_tasks&view=form&id=${id}`);
    g.assertClean();
    await g.close();
  });

  it('says in place why the server refused the list, and recovers when the search is fixed', async () => {
    const g = await openList('project.action_project_tasks', { route: { search: 'x'.repeat(1001) } });
    const alert = g.page.getByRole('alert');
    await expect.poll(() => alert.innerText()).toMatch(/name_search term is too long/);
    await expect(alert.getByRole('button', { name: 'Retry' }).count()).resolves.toBe(1);
    await g.page.getByRole('searchbox', { name: 'Search' }).fill('Task 00');
    await g.page.getByRole('searchbox', { name: 'Search' }).press('Enter');
    await expect.poll(() => pagerText(g).innerText()).toBe('1–9 / 9');
    await expect(alert.count()).resolves.toBe(0);
    g.assertClean();
    await g.close();
  });

  it('offers only what the caller may do: a project user duplicates but does not delete', async () => {
    const user = { email: 'worker@example.com', password: 'a-long-worker-password-42' };
    await createUserWithPassword(h.t, { name: 'Worker', ...user, groups: ['core.group_user', 'project.group_project_user'] });
    const g = await openList('project.action_project_tasks', { user });
    await g.page.getByLabel('Select Task 003').check();
    const bar = g.page.getByRole('region', { name: 'Selection' });
    await expect(bar.getByRole('button', { name: 'Duplicate' }).count()).resolves.toBe(1);
    await expect(bar.getByRole('button', { name: 'Reassign tasks' }).count()).resolves.toBe(1);
    await expect(bar.getByRole('button', { name: 'Delete' }).count()).resolves.toBe(0);
    g.assertClean();
    await g.close();
  });

  it('is usable 360 px wide: the table scrolls inside its box, the page does not', async () => {
    const g = await openList('project.action_project_tasks', { width: 360 });
    await expect.poll(() => recordRows(g).count()).toBe(30);
    const sizes = await g.page.evaluate(() => {
      const box = document.querySelector('.ff-list-scroll') as HTMLElement;
      return { page: document.documentElement.scrollWidth, box: box.clientWidth, table: box.scrollWidth };
    });
    expect(sizes.page).toBeLessThanOrEqual(360);
    expect(sizes.table).toBeGreaterThan(sizes.box);
    for (const name of ['New', 'Filters', 'Next page']) {
      const box = await g.page.getByRole('button', { name, exact: true }).boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(360);
    }
    g.assertClean();
    await g.close();
  });
});
