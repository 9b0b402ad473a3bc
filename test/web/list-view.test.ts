/**
 * The list view (issue 12 item 4, CONTRACTS C2 "List") in Debian's Chromium on 250 real contacts:
 * columns from the arch, render time, sorting by header, pages with the total, the search box
 * (name_search), field filters, the keyboard, archived records, Duplicate, and "select all N" sent
 * as a selection object that Delete honours beyond the page; never more than a page per request.
 */
import { describe, expect, it } from 'vitest';
import { firstName, listHarness, pad, pagerText, recordRows } from './list-harness.js';

const CITIES = ['Lyon', 'Oslo', 'Rome', 'Lima', 'Kyiv'];

const h = listHarness(async ({ json }) => {
  // The users' own contacts (messaging gives each user one) are archived: the list holds the 250 made here.
  await json('PUT', '/api/bulk-update/Contact', { selection: { filter_str: 'Q(user__isnull=False)' }, vals: { active: false } });
  await json('POST', '/api/bulk-create/Contact', Array.from({ length: 250 }, (_, i) => ({
    name: `Person ${pad(i + 1)}`,
    email: `person${pad(i + 1)}@example.com`,
    city: CITIES[i % CITIES.length],
  })));
  await json('POST', '/api/bulk-create/Contact', [1, 2, 3].map((i) => ({ name: `Old Archived ${i}`, active: false })));
});
const { json, countOf, openList } = h;

describe('the list view', () => {
  it('shows the arch columns and 80 of 250 contacts with the total, rendered within 100 ms of the data, one page per request', async () => {
    const g = await openList('contacts.action_contacts');
    await expect(g.page.getByRole('columnheader').count()).resolves.toBe(7);
    for (const name of ['Name', 'Works for', 'Email', 'Phone', 'City', 'Tags']) {
      await expect(g.page.getByRole('columnheader', { name, exact: true }).count()).resolves.toBe(1);
    }
    await expect.poll(() => recordRows(g).count()).toBe(80);
    // One row per record plus the header row (no sums here, so no footer).
    await expect(g.page.getByRole('table').getByRole('row').count()).resolves.toBe(81);
    await expect(pagerText(g).innerText()).resolves.toBe('1–80 / 250');
    await expect(firstName(g).innerText()).resolves.toBe('Person 001');
    const renderMs = () => g.page.evaluate(() => performance.getEntriesByName('ff:list-render')[0]?.duration ?? -1);
    const first = await renderMs();
    await g.page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => pagerText(g).innerText()).toBe('81–160 / 250');
    const next = await renderMs();
    console.log(`80 contacts on screen ${first.toFixed(1)} ms after their data arrived (first page), ${next.toFixed(1)} ms (next page)`);
    for (const ms of [first, next]) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(100);
    }
    // Playwright reports a request to the test process asynchronously: the page may show its
    // answer before the event is in (seen once in CI), so wait for it rather than read it at once.
    await expect.poll(() => g.queries.filter((q) => q.fields).length).toBe(2);
    for (const q of g.queries) expect(q.limit).toBeLessThanOrEqual(80);
    g.assertClean();
    await g.close();
  });

  it('sorts by a header click (aria-sort follows), pages forward and back, and keeps it in the route', async () => {
    const g = await openList('contacts.action_contacts');
    const name = g.page.getByRole('columnheader', { name: 'Name' });
    await expect(name.getAttribute('aria-sort')).resolves.toBe('ascending');
    await name.getByRole('button').click();
    await expect.poll(() => name.getAttribute('aria-sort')).toBe('descending');
    await expect.poll(() => firstName(g).innerText()).toBe('Person 250');
    await g.page.getByRole('columnheader', { name: 'Email' }).getByRole('button').click();
    await expect.poll(() => g.page.getByRole('columnheader', { name: 'Email' }).getAttribute('aria-sort')).toBe('ascending');
    await expect(name.getAttribute('aria-sort')).resolves.toBeNull();
    await g.page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => pagerText(g).innerText()).toBe('81–160 / 250');
    await expect.poll(() => firstName(g).innerText()).toBe('Person 081');
    await g.page.getByRole('button', { name: 'Next page' }).click();
    await g.page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => pagerText(g).innerText()).toBe('241–250 / 250');
    await expect(g.page.getByRole('button', { name: 'Next page' }).isDisabled()).resolves.toBe(true);
    const last = (await g.navigations()).at(-1)!;
    expect(last.params).toMatchObject({ action: 'contacts.action_contacts', view: 'list', page: '4', order: 'email ASC' });
    expect(last.options).toEqual({ replace: true });
    for (const q of g.queries) expect(q.limit).toBeLessThanOrEqual(80);
    g.assertClean();
    await g.close();
  });

  it('narrows with the search box through name_search, and with a field filter', async () => {
    const g = await openList('contacts.action_contacts');
    const search = g.page.getByRole('searchbox', { name: 'Search' });
    const searched = g.page.waitForRequest((r) => r.url().includes('/api/query/Contact') && JSON.parse(r.postData() ?? '{}').name_search !== undefined);
    await search.fill('person 24');
    const body = JSON.parse((await searched).postData()!);
    expect(body.name_search).toEqual(['person', '24']);
    const expected = await countOf('Contact', { name_search: ['person', '24'] });
    expect(expected).toBe(13);
    await expect.poll(() => pagerText(g).innerText()).toBe(`1–${expected} / ${expected}`);
    await expect(recordRows(g).count()).resolves.toBe(expected);

    await search.fill('');
    await expect.poll(() => pagerText(g).innerText()).toBe('1–80 / 250');
    await g.page.getByRole('button', { name: 'Filters' }).click();
    await g.page.getByLabel('Field').selectOption({ label: 'City' });
    await g.page.getByLabel('Condition').selectOption({ label: 'contains' });
    await g.page.getByLabel('Value').fill('lyo');
    await g.page.getByRole('button', { name: 'Add filter' }).click();
    await expect.poll(() => pagerText(g).innerText()).toBe('1–50 / 50');
    await expect(g.page.getByRole('list', { name: 'Active filters' }).innerText()).resolves.toContain('City contains “lyo”');
    const cities = await recordRows(g).locator('td:nth-child(6)').allInnerTexts();
    expect(new Set(cities)).toEqual(new Set(['Lyon']));
    await g.page.getByRole('button', { name: 'Remove filter City contains “lyo”' }).click();
    await expect.poll(() => pagerText(g).innerText()).toBe('1–80 / 250');
    g.assertClean();
    await g.close();
  });


  it('moves between rows with the arrows: Space ticks, Enter opens the record; Tab reaches the rows after the headers', async () => {
    const g = await openList('contacts.action_contacts');
    await g.page.getByRole('columnheader', { name: 'City' }).getByRole('button').focus();
    await g.page.keyboard.press('Tab');
    const focusedId = () => g.page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.id ?? null);
    const ids = await recordRows(g).evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.id));
    await expect(focusedId()).resolves.toBe(ids[0]);
    await g.page.keyboard.press('ArrowDown');
    await g.page.keyboard.press('ArrowDown');
    await expect(focusedId()).resolves.toBe(ids[2]);
    await g.page.keyboard.press('Space');
    await expect.poll(() => recordRows(g).nth(2).getAttribute('aria-selected')).toBe('true');
    await expect(g.page.getByLabel('Select Person 003').isChecked()).resolves.toBe(true);
    await g.page.keyboard.press('ArrowUp');
    await g.page.keyboard.press('Enter');
    await expect.poll(async () => (await g.navigations()).at(-1)?.params).toEqual({ action: 'contacts.action_contacts', view: 'form', id: ids[1] });
    await g.page.getByRole('button', { name: 'New' }).click();
    await expect.poll(async () => (await g.navigations()).at(-1)?.params).toEqual({ action: 'contacts.action_contacts', view: 'form' });
    g.assertClean();
    await g.close();
  });

  it('opens a group of 250 a page at a time: 80 rows, then "Load more" adds the next 80', async () => {
    const g = await openList('contacts.action_contacts', { route: { group: 'is_company' } });
    const group = g.page.getByRole('button', { name: /^No/ });
    await expect(group.innerText()).resolves.toMatch(/No\s*\(250\)/);
    await group.click();
    await expect.poll(() => recordRows(g).count()).toBe(80);
    await g.page.getByRole('button', { name: 'Load more (170)' }).click();
    await expect.poll(() => recordRows(g).count()).toBe(160);
    await expect(recordRows(g).nth(80).locator('td').nth(1).innerText()).resolves.toBe('Person 081');
    await expect.poll(() => g.queries.map((q) => [q.limit, q.page])).toEqual([[80, 1], [80, 1], [80, 2]]);
    g.assertClean();
    await g.close();
  });

  it('shows archived records on request and archives or restores a selection', async () => {
    const g = await openList('contacts.action_contacts', { route: { search: 'Old Archived' } });
    await expect.poll(() => pagerText(g).innerText()).toBe('0 / 0');
    await g.page.getByLabel('Show archived').check();
    await expect.poll(() => pagerText(g).innerText()).toBe('1–3 / 3');
    expect(g.queries.at(-1)!.filter_str).toBe('Q(active__in=[True, False])');
    await expect(recordRows(g).first().innerText()).resolves.toContain('Archived');
    await g.page.getByLabel('Select all records on this page').check();
    await g.page.getByRole('button', { name: 'Unarchive' }).click();
    await expect.poll(() => countOf('Contact', { name_search: ['Old Archived'] })).toBe(3);
    await g.page.getByLabel('Show archived').uncheck();
    await expect.poll(() => pagerText(g).innerText()).toBe('1–3 / 3');
    await g.page.getByLabel('Select all records on this page').check();
    await g.page.getByRole('button', { name: 'Archive', exact: true }).click();
    await expect.poll(() => countOf('Contact', { name_search: ['Old Archived'] })).toBe(0);
    await expect.poll(() => pagerText(g).innerText()).toBe('0 / 0');
    await expect(g.page.getByText('No contacts match this search.').isVisible()).resolves.toBe(true);
    g.assertClean();
    await g.close();
  });

  it('duplicates the ticked rows (clone): the copies are named "(copy)"', async () => {
    const g = await openList('contacts.action_contacts');
    await g.page.getByLabel('Select Person 003').check();
    await g.page.getByLabel('Select Person 004').check();
    // Read the ticked rows' ids before the click: the list reloads with the copies right after it.
    const ids = await recordRows(g).evaluateAll((rows) => rows.slice(2, 4).map((r) => Number((r as HTMLElement).dataset.id)));
    const cloned = g.page.waitForRequest((r) => r.url().endsWith('/api/clone/Contact'));
    await g.page.getByRole('button', { name: 'Duplicate' }).click();
    expect(JSON.parse((await cloned).postData()!)).toEqual({ ids });
    await expect.poll(() => pagerText(g).innerText()).toBe('1–80 / 252');
    const copies = await json('POST', '/api/query/Contact', { fields: ['name'], name_search: ['(copy)'] });
    expect(copies.map((c: { name: string }) => c.name).sort()).toEqual(['Person 003 (copy)', 'Person 004 (copy)']);
    await expect(g.page.getByRole('status').filter({ hasText: 'duplicated' }).innerText()).resolves.toContain('2 records duplicated.');
    g.assertClean();
    await g.close();
  });

  it('"Select all N" sends a selection object beyond the page; Delete removes every match but the unticked one', async () => {
    const g = await openList('contacts.action_contacts', { route: { filter: JSON.stringify([{ field: 'city', op: 'contains', value: 'o' }]) } });
    const matching = await countOf('Contact', { filter_str: "Q(city__icontains='o')" });
    expect(matching).toBeGreaterThan(80); // Lyon, Oslo and Rome
    await expect.poll(() => pagerText(g).innerText()).toBe(`1–80 / ${matching}`);
    await g.page.getByLabel('Select all records on this page').check();
    const bar = g.page.getByRole('region', { name: 'Selection' });
    await expect(bar.getByRole('status').innerText()).resolves.toBe('80 selected');
    await bar.getByRole('button', { name: `Select all ${matching}` }).click();
    await expect(bar.getByRole('status').innerText()).resolves.toBe(`All ${matching} selected`);
    await g.page.getByLabel('Select Person 001').uncheck();
    await expect(bar.getByRole('status').innerText()).resolves.toBe(`All ${matching - 1} selected`);
    const keptId = Number(await recordRows(g).first().getAttribute('data-id'));
    await bar.getByRole('button', { name: 'Delete' }).click();
    const dialog = g.page.getByRole('dialog', { name: 'Delete records' });
    await expect(dialog.innerText()).resolves.toContain(`Delete ${matching - 1} records?`);
    const deleted = g.page.waitForRequest((r) => r.url().endsWith('/api/bulk-delete/Contact'));
    await dialog.getByRole('button', { name: 'Delete' }).click();
    expect(JSON.parse((await deleted).postData()!)).toEqual({ filter_str: "Q(city__icontains='o')", exclude_ids: [keptId] });
    await expect.poll(() => pagerText(g).innerText()).toBe('1–1 / 1');
    await expect(countOf('Contact', { filter_str: "Q(city__icontains='o')" })).resolves.toBe(1);
    await expect(countOf('Contact')).resolves.toBe(252 - (matching - 1));
    for (const q of g.queries) expect(q.limit).toBeLessThanOrEqual(80);
    g.assertClean();
    await g.close();
  });
});

