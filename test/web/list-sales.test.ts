/**
 * The list view on sales products in Debian's Chromium: amounts shown in each record's currency
 * (symbol, side and decimals of the `Currency` record) and summed in the footer over every match,
 * one sum per currency (dollars and euros do not add up to one figure), in group rows too.
 */
import { describe, expect, it } from 'vitest';
import { listHarness, recordRows } from './list-harness.js';

const h = listHarness(async ({ t, json }) => {
  await t.platform.install(t.name, { init: ['sales'] });
  const [eur] = await json('POST', '/api/query/Currency', { fields: ['name'], filter_str: "Q(name='EUR') & Q(active__in=[True, False])" });
  await json('PUT', `/api/update/Currency/${eur.id}`, { active: true, symbol: '€', position: 'After', rounding: 0.01 });
  await json('POST', '/api/bulk-create/Product', [
    { name: 'Chair', list_price: 1234.5 },
    { name: 'Desk', list_price: 99.999, currency: eur.id },
  ]);
});

describe('the list view of products', () => {
  it('shows each amount in its record\'s currency and sums the column', async () => {
    const g = await h.openList('sales.action_products');
    await expect.poll(() => recordRows(g).count()).toBe(2);
    const [company] = await h.json('POST', '/api/query/Product', { fields: ['currency.symbol', 'currency.position'], filter_str: "Q(name='Chair')" });
    const symbol = company.currency.symbol as string;
    const price = (row: number) => recordRows(g).nth(row).locator('td.ff-list-number').innerText();
    await expect(price(0)).resolves.toBe(company.currency.position === 'After' ? `1,234.50\u00a0${symbol}` : `${symbol}1,234.50`);
    await expect(price(1)).resolves.toBe('100.00\u00a0€');
    const footer = g.page.locator('tfoot td.ff-list-sum').first();
    await expect.poll(() => footer.locator('li').allInnerTexts()).toEqual([await price(0), '100.00\u00a0€']);
    expect(await g.page.locator('tfoot').innerText()).not.toContain('1,334.50');
    // Grouped by currency, each group row's sum carries its group's currency.
    const chair = await price(0);
    await g.page.getByLabel('Group by').selectOption({ label: 'Currency' });
    await expect.poll(() => g.page.locator('tr.ff-list-group').count()).toBe(2);
    const groupSums = async () => (await g.page.locator('tr.ff-list-group td.ff-list-sum').allInnerTexts()).filter(Boolean).sort();
    await expect.poll(groupSums).toEqual([chair, '100.00\u00a0€'].sort());
    expect(g.queries[0]!.fields).toEqual(expect.arrayContaining(['list_price', 'currency.symbol', 'currency.position', 'currency.rounding']));
    expect(g.queries[0]!.footer_aggregates).toEqual(['list_price']);
    g.assertClean();
    await g.close();
  });
});
