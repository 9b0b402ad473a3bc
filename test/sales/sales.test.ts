/**
 * The sales module (core primitives issue, item 6): products priced as Monetary per unit of
 * measure, orders with lines whose description, unit and unit price follow the product until
 * written, subtotals and totals stored rounded to the order's currency, lines in another unit of
 * the same category converted, and an order in a foreign currency showing its company-currency
 * total through the rate of its date. Driven through the HTTP API as an administrator and as a
 * salesperson's key.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { Company } from '../../modules/core/models/company.js';
import { Currency, CurrencyRate } from '../../modules/core/models/currency.js';
import { Language } from '../../modules/core/models/language.js';
import { UoM } from '../../modules/core/models/uom.js';
import { rows } from '../support/orm.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let salesperson: string;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  salesperson = (await t.run(() => createServiceAccountKey({ name: 'seller', groups: ['core.group_user', 'sales.group_sale_user'] }))).key;
  await t.run(async () => {
    ids.company = (await Company.query().order_by('id ASC').first())!.id;
    for (const code of ['USD', 'EUR', 'JPY']) ids[code] = (await Currency.query({ name: code }).with_archived().first())!.id;
    await Company.query({ id: ids.company }).update({ currency: ids.USD });
    await Currency.query({ id__in: [ids.EUR, ids.JPY] }).with_archived().update({ active: true });
    for (const unit of ['uom_unit', 'uom_kg', 'uom_g', 'uom_lb', 'uom_l', 'uom_dozen']) {
      ids[unit] = (await UoM.query({ identifier: `core.${unit}` }).first())!.id;
    }
    await CurrencyRate.create_many([
      { currency: ids.EUR, company: ids.company, date: '2026-01-01', rate: 1.1 },
      { currency: ids.EUR, company: ids.company, date: '2026-06-01', rate: 1.2 },
    ]);
  });
  ids.customer = await create('Contact', { name: 'Acme Retail', is_company: true });
});
afterAll(async () => { await t?.close(); });

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const asSeller = (method: Method, url: string, body?: unknown) => t.api(method, url, body, { authorization: `Bearer ${salesperson}` });

async function create(model: string, vals: Record<string, unknown>, call = t.api): Promise<number> {
  const res = await call('POST', `/api/create/${model}`, vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

async function fetch(model: string, id: number, fields: string[]): Promise<Record<string, any>> {
  const res = await t.api('POST', `/api/fetch/${model}/${id}`, { fields });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Amount columns of an order and its lines as the database holds them (NUMERIC as text). */
async function storedAmounts(orderId: number): Promise<{ total: string; company: string; subtotals: string[] }> {
  return t.run(async () => {
    const [order] = await rows<{ amount_total: string; amount_total_company: string }>(
      sql`SELECT amount_total::text, amount_total_company::text FROM sale_order WHERE id = ${orderId}`,
    );
    const lines = await rows<{ subtotal: string }>(sql`SELECT subtotal::text FROM sale_order_line WHERE order_id = ${orderId} ORDER BY id`);
    return { total: order!.amount_total, company: order!.amount_total_company, subtotals: lines.map((l) => l.subtotal) };
  });
}

describe('products', () => {
  it('default to the Units unit and the company currency; the price is a Monetary in that currency', async () => {
    const id = await create('Product', { name: 'Chair', default_code: 'FURN-001', list_price: 49.999 });
    const product = await fetch('Product', id, ['uom.name', 'currency.name', 'list_price']);
    expect(product).toMatchObject({ uom: { name: 'Units' }, currency: { name: 'USD' }, list_price: 50 });
    const reg = (await t.api('GET', '/api/get_registry/Product')).json();
    expect(reg.list_price).toMatchObject({ type: 'Monetary', currency_field: 'currency' });
    // A picker finds a product by its internal reference.
    const found = await t.api('POST', '/api/name_search/Product', { term: 'FURN-001' });
    expect(found.json().map((r: { id: number }) => r.id)).toContain(id);
  });
});

describe('orders', () => {
  it('start as a quotation with a reference, the company currency, today and the caller as salesperson', async () => {
    const product = await create('Product', { name: 'Desk', list_price: 120 });
    const id = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product, quantity: 2 }] });
    const order = await fetch('SaleOrder', id, ['name', 'stage.name', 'currency.name', 'date_order', 'user', 'amount_total', 'currency_rate', 'amount_total_company']);
    expect(order.name).toBe(`S${String(id).padStart(5, '0')}`);
    expect(order).toMatchObject({ stage: { name: 'Quotation' }, currency: { name: 'USD' }, amount_total: 240, currency_rate: 1, amount_total_company: 240 });
    expect(order.date_order).toBe(new Date().toISOString().slice(0, 10));
    expect(order.user).not.toBeNull();
    const res = await t.api('POST', '/api/query/SaleOrderLine', { filter_str: `Q(order=${id})`, fields: ['name', 'uom.name', 'price_unit', 'product_qty', 'subtotal', 'currency.name'] });
    expect(res.json() ?? res.json()).toEqual([expect.objectContaining({ name: 'Desk', uom: expect.objectContaining({ name: 'Units' }), price_unit: 120, product_qty: 2, subtotal: 240, currency: expect.objectContaining({ name: 'USD' }) })]);
  });

  it('store subtotals and the total rounded to the order currency, with no float drift (0.1 + 0.2 = 0.30; JPY whole yen)', async () => {
    const dime = await create('Product', { name: 'Dime sticker', list_price: 0.1 });
    const fifth = await create('Product', { name: 'Fifth sticker', list_price: 0.2 });
    const third = await create('Product', { name: 'Third sticker' });
    const id = await create('SaleOrder', {
      customer: ids.customer,
      order_lines: [{ product: dime }, { product: fifth }, { product: third, price_unit: 0.333333, quantity: 3 }],
    });
    // 0.1 + 0.2 + 0.999999 → subtotals 0.10, 0.20, 1.00; the total 1.30, not 1.3000000000000003.
    const stored = await storedAmounts(id);
    expect(stored.subtotals.map(Number)).toEqual([0.1, 0.2, 1]);
    expect(Number(stored.total)).toBe(1.3);
    expect(stored.total).toMatch(/^1\.30?$/);
    expect((await fetch('SaleOrder', id, ['amount_total'])).amount_total).toBe(1.3);

    const yen = await create('SaleOrder', { customer: ids.customer, currency: ids.JPY, order_lines: [{ product: third, price_unit: 100.4, quantity: 1 }, { product: third, price_unit: 0.6, quantity: 1 }] });
    const yenStored = await storedAmounts(yen);
    expect(yenStored.subtotals.map(Number)).toEqual([100, 1]);
    expect(Number(yenStored.total)).toBe(101);
  });

  it('recompute the total rounded when a line changes (the recompute path rounds like a write)', async () => {
    const product = await create('Product', { name: 'Ribbon', list_price: 0.1 });
    const id = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product, quantity: 1 }] });
    const [line] = (await t.api('POST', '/api/query/SaleOrderLine', { filter_str: `Q(order=${id})`, fields: ['id'] })).json();
    // 3 × 0.1 is 0.30000000000000004 in binary: stored 0.30.
    expect((await t.api('PUT', `/api/update/SaleOrderLine/${line.id}`, { quantity: 3 })).statusCode).toBe(200);
    const stored = await storedAmounts(id);
    expect(Number(stored.subtotals[0])).toBe(0.3);
    expect(Number(stored.total)).toBe(0.3);
    expect(stored.total).not.toContain('00000');
  });

  it('take the product’s unit and price until written; a new product takes its own again', async () => {
    const pen = await create('Product', { name: 'Pen', list_price: 2 });
    const box = await create('Product', { name: 'Pen box', list_price: 15 });
    const id = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product: pen, quantity: 10, price_unit: 1.5, name: 'Pens, promo' }] });
    const [line] = (await t.api('POST', '/api/query/SaleOrderLine', { filter_str: `Q(order=${id})`, fields: ['name', 'price_unit', 'subtotal'] })).json();
    expect(line).toMatchObject({ name: 'Pens, promo', price_unit: 1.5, subtotal: 15 });
    await t.api('PUT', `/api/update/SaleOrderLine/${line.id}`, { product: box });
    expect(await fetch('SaleOrderLine', line.id, ['name', 'price_unit', 'subtotal'])).toMatchObject({ name: 'Pen box', price_unit: 15, subtotal: 150 });
    expect((await fetch('SaleOrder', id, ['amount_total'])).amount_total).toBe(150);
  });

  it('convert a line in another unit of the same category: price per line unit, quantity in the product unit', async () => {
    const flour = await create('Product', { name: 'Flour', list_price: 2.4, uom: ids.uom_kg });
    const id = await create('SaleOrder', {
      customer: ids.customer,
      order_lines: [
        { product: flour, quantity: 500, uom: ids.uom_g },
        { product: flour, quantity: 2, uom: ids.uom_lb },
        { product: flour, quantity: 1.5 },
      ],
    });
    const lines = (await t.api('POST', '/api/query/SaleOrderLine', {
      filter_str: `Q(order=${id})`, fields: ['uom.name', 'price_unit', 'product_qty', 'subtotal'], order_by: ['id ASC'],
    })).json();
    expect(lines).toEqual([
      // 2.40 per kg is 0.0024 per g: 500 g cost 1.20 and are 0.5 kg.
      expect.objectContaining({ uom: expect.objectContaining({ name: 'g' }), price_unit: 0.0024, product_qty: 0.5, subtotal: 1.2 }),
      // 1 lb = 0.45359237 kg: 1.088622 per lb, 2 lb = 2.18 and 0.907 kg (kg rounding 0.001).
      expect.objectContaining({ uom: expect.objectContaining({ name: 'lb' }), price_unit: 1.088622, product_qty: 0.907, subtotal: 2.18 }),
      expect.objectContaining({ uom: expect.objectContaining({ name: 'kg' }), price_unit: 2.4, product_qty: 1.5, subtotal: 3.6 }),
    ]);
    expect((await fetch('SaleOrder', id, ['amount_total'])).amount_total).toBe(6.98);
  });

  it('refuse a unit of another category with a UserError, and write nothing', async () => {
    const flour = await create('Product', { name: 'Rye flour', list_price: 3, uom: ids.uom_kg });
    const before = (await t.api('POST', '/api/query/SaleOrder', { fields: ['id'] })).json().length;
    const res = await t.api('POST', '/api/create/SaleOrder', { customer: ids.customer, note: 'litres of flour', order_lines: [{ product: flour, quantity: 1, uom: ids.uom_l }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'UserError', detail: expect.stringMatching(/units belong to different categories/) });
    expect((await t.api('POST', '/api/query/SaleOrder', { fields: ['id'] })).json()).toHaveLength(before);
    expect((await t.api('POST', '/api/query/SaleOrder', { filter_str: "Q(note='litres of flour')" })).json()).toEqual([]);
  });
});

describe('cost', () => {
  it('an order costs the same number of statements with 1 line or 40 (no query per line), in a foreign currency too', async () => {
    const product = await create('Product', { name: 'Nail', list_price: 0.05 });
    const counts: number[] = [];
    for (const n of [1, 40]) {
      for (const currency of [ids.USD, ids.EUR]) {
        const body = { customer: ids.customer, currency, order_lines: Array.from({ length: n }, (_, i) => ({ product, quantity: i + 1 })) };
        const { count } = await t.countStatements(async () => expect((await t.api('POST', '/api/create/SaleOrder', body)).statusCode).toBe(200));
        counts.push(count);
      }
    }
    expect(counts[2]).toBe(counts[0]);
    expect(counts[3]).toBe(counts[1]);
  });
});

describe('foreign currency', () => {
  it('converts the unit price at the order date and shows the company-currency total through the dated rate', async () => {
    const lamp = await create('Product', { name: 'Lamp', list_price: 100 }); // USD
    const id = await create('SaleOrder', { customer: ids.customer, currency: ids.EUR, date_order: '2026-03-15', order_lines: [{ product: lamp }] });
    // 1 EUR = 1.10 USD on 2026-01-01 (the latest on or before 2026-03-15): 100 USD = 90.909091 EUR.
    expect(await fetch('SaleOrder', id, ['currency.name', 'currency_rate', 'amount_total', 'company_currency.name', 'amount_total_company'])).toMatchObject({
      currency: { name: 'EUR' }, currency_rate: 1.1, amount_total: 90.91, company_currency: { name: 'USD' }, amount_total_company: 100,
    });
    const [line] = (await t.api('POST', '/api/query/SaleOrderLine', { filter_str: `Q(order=${id})`, fields: ['price_unit', 'subtotal'] })).json();
    expect(line).toMatchObject({ price_unit: 90.909091, subtotal: 90.91 });

    // Another date takes that date's rate; the line prices stay.
    await t.api('PUT', `/api/update/SaleOrder/${id}`, { date_order: '2026-07-01' });
    expect(await fetch('SaleOrder', id, ['currency_rate', 'amount_total', 'amount_total_company'])).toMatchObject({
      currency_rate: 1.2, amount_total: 90.91, amount_total_company: 109.09, // 90.91 × 1.2 = 109.092
    });
    expect(Number((await storedAmounts(id)).company)).toBe(109.09);

    // A rate entered later for that date does not move the order until asked.
    await t.run(() => CurrencyRate.create({ currency: ids.EUR, company: ids.company, date: '2026-07-01', rate: 1.25 }));
    expect((await fetch('SaleOrder', id, ['currency_rate'])).currency_rate).toBe(1.2);
    const updated = await t.api('POST', `/api/execute/SaleOrder/action_update_rate`, { ids: [id] });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(await fetch('SaleOrder', id, ['currency_rate', 'amount_total_company'])).toMatchObject({ currency_rate: 1.25, amount_total_company: 113.64 });
  });

  it('gates the foreign-currency inputs on the Multi-Currency setting in the registry', async () => {
    const reg = (await t.api('GET', '/api/get_registry/SaleOrder')).json();
    for (const name of ['currency', 'currency_rate', 'amount_total_company']) {
      expect(reg[name]).toMatchObject({ visible_setting: 'Q(enable_multi_currency=True)', visible_setting_holds: false });
    }
    expect(reg.amount_total.visible_setting).toBeUndefined();
  });
});

describe('stages, tags and rights', () => {
  it('confirm moves a quotation to the first confirmed stage; stages are listed by sequence', async () => {
    const stages = (await t.api('POST', '/api/query/SaleStage', { fields: ['name'] })).json().map((s: { name: string }) => s.name);
    expect(stages).toEqual(['Quotation', 'Quotation Sent', 'Sales Order', 'Cancelled']);
    const id = await create('SaleOrder', { customer: ids.customer });
    const res = await t.api('POST', '/api/execute/SaleOrder/action_confirm', { ids: [id] });
    expect(res.statusCode, res.body).toBe(200);
    expect((await fetch('SaleOrder', id, ['stage.name'])).stage).toMatchObject({ name: 'Sales Order' });
    // A confirmed sale is cancelled before it can be deleted.
    const refused = await t.api('DELETE', `/api/delete/SaleOrder/${id}`);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'UserError', detail: expect.stringContaining('cancel them first') });
    const cancelled = (await t.api('POST', '/api/query/SaleStage', { filter_str: "Q(name='Cancelled')", fields: ['id'] })).json()[0].id;
    expect((await t.api('PUT', `/api/update/SaleOrder/${id}`, { stage: cancelled })).statusCode).toBe(200);
    expect((await t.api('DELETE', `/api/delete/SaleOrder/${id}`)).statusCode).toBe(200);
  });

  it('tags orders, and a salesperson quotes but neither keeps the catalogue nor deletes orders', async () => {
    const tag = await create('SaleTag', { name: 'Upsell' });
    const product = await create('Product', { name: 'Stool', list_price: 30 });
    const id = await create('SaleOrder', { customer: ids.customer, tags: [tag], order_lines: [{ product, quantity: 2 }] }, asSeller);
    expect(await fetch('SaleOrder', id, ['tags.name', 'amount_total', 'stage.name'])).toMatchObject({ tags: [{ name: 'Upsell' }], amount_total: 60, stage: { name: 'Quotation' } });
    expect((await asSeller('POST', '/api/create/Product', { name: 'Forbidden' })).statusCode).toBe(403);
    expect((await asSeller('DELETE', `/api/delete/SaleOrder/${id}`)).statusCode).toBe(403);
    expect((await asSeller('POST', '/api/query/Product', { filter_str: `Q(id=${product})` })).json()).toHaveLength(1);
  });

  it('translates labels and menus once French is active', async () => {
    const fr = await t.run(async () => (await Language.query({ code: 'fr' }).with_archived().first())!.id);
    expect((await t.api('PUT', `/api/update/Language/${fr}`, { active: true })).statusCode).toBe(200);
    const reg = (await t.api('GET', '/api/get_registry/SaleOrder', undefined, { 'accept-language': 'fr' })).json();
    expect(reg.customer.label).toBe('Client');
    expect(reg.amount_total_company.label).toBe('Total en devise de la société');
    const menus = await t.api('POST', '/api/execute/Language/get_menus', { request_body: { inputs: {}, context: { lang: 'fr' } } });
    expect(menus.statusCode, menus.body).toBe(200);
    const names = Object.fromEntries(menus.json().result.menus.map((m: { identifier: string; name: string }) => [m.identifier, m.name]));
    expect(names).toMatchObject({ 'sales.menu_sales': 'Ventes', 'sales.menu_sales_products': 'Articles' });
  });
});
