/**
 * Sales forms (issue 11 items 5 and 6): `ui-effect` on order lines and orders — choosing a product
 * fills the description, unit and price; the quantity or the unit updates the subtotal and the
 * order's total — writing nothing, and answering exactly what saving the form then stores; the
 * customer effect moving an order to the customer's company (an effect method, and the computed
 * fields following it transitively); and the discount wizard on selected orders.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Company } from '../../modules/core/models/company.js';
import { Currency } from '../../modules/core/models/currency.js';
import { Group } from '../../modules/core/models/group.js';
import { ModelAccess } from '../../modules/core/models/model_access.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { Language } from '../../modules/core/models/language.js';
import { UoM } from '../../modules/core/models/uom.js';
import { User } from '../../modules/core/models/user.js';
import { uiEffect } from '../../src/api/ui-effect.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { currentEnv } from '../../src/orm/env.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { databaseFingerprint, writeStatements } from '../support/database-fingerprint.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  await t.run(async () => {
    ids.company = (await Company.query().order_by('id ASC').first())!.id;
    for (const code of ['USD', 'EUR', 'JPY']) ids[code] = (await Currency.query({ name: code }).with_archived().first())!.id;
    await Company.query({ id: ids.company }).update({ currency: ids.USD });
    await Currency.query({ id__in: [ids.EUR, ids.JPY] }).with_archived().update({ active: true });
    for (const unit of ['uom_unit', 'uom_kg', 'uom_g']) ids[unit] = (await UoM.query({ identifier: `core.${unit}` }).first())!.id;
  });
  ids.customer = await create('Contact', { name: 'Acme Retail', is_company: true });
  ids.desk = await create('Product', { name: 'Desk', list_price: 120 });
  ids.pen = await create('Product', { name: 'Pen', list_price: 2.5 });
  ids.flour = await create('Product', { name: 'Flour', list_price: 2.4, uom: ids.uom_kg });
});
afterAll(async () => { await t?.close(); });

async function create(model: string, vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', `/api/create/${model}`, vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

async function fetch(model: string, id: number, fields: string[]): Promise<Record<string, any>> {
  const res = await t.api('POST', `/api/fetch/${model}/${id}`, { fields });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function effect(model: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.api('POST', `/api/ui-effect/${model}`, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The ids of an order's lines, in order. */
async function lineIds(order: number): Promise<number[]> {
  return (await t.api('POST', '/api/query/SaleOrderLine', { filter_str: `Q(order=${order})`, fields: ['id'], order_by: ['id ASC'] })).json().map((l: { id: number }) => l.id);
}

/** Plain values of an answer as a fetch of the same fields gives them (links as ids, for comparing). */
function asIds(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v && typeof v === 'object' && 'id' in v ? (v as { id: unknown }).id : v]));
}

describe('ui-effect on an order line', () => {
  it('choosing a product on a new line fills description, unit, price and subtotal, and reports the order total with the line added', async () => {
    const order = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product: ids.pen, quantity: 4 }] });
    const answer = await effect('SaleOrderLine', { vals: { order: order, product: ids.desk, quantity: 2 }, field_name: 'product' });
    expect(answer).toMatchObject({
      name: 'Desk', uom: { id: ids.uom_unit, display_name: 'Units' }, price_unit: 120, product_qty: 2, subtotal: 240,
      currency: { id: ids.USD, display_name: 'USD' }, company: { id: ids.company },
      // The line's order as the form around it shows it: 4 × 2.50 + 240.
      order: { id: order, amount_total: 250, amount_total_company: 250 },
    });
    // A new line's defaults come along (the form sent no sequence).
    expect(answer.sequence).toBe(10);
    // What the form sent is not repeated.
    expect(answer).not.toHaveProperty('product');
    expect(answer).not.toHaveProperty('quantity');

    // Saving the form (its values overlaid with the answer) stores exactly what was answered.
    const id = await create('SaleOrderLine', { order, product: ids.desk, quantity: 2, ...answer });
    const { order: answeredOrder, ...own } = answer;
    expect(asIds(await fetch('SaleOrderLine', id, Object.keys(own)))).toMatchObject(asIds(own));
    expect(await fetch('SaleOrder', order, ['amount_total', 'amount_total_company'])).toMatchObject({ amount_total: 250, amount_total_company: 250 });
    expect(answeredOrder).toEqual({ id: order, amount_total: 250, amount_total_company: 250 });
  });

  it('changing the quantity of a saved line updates subtotal and order total, and writes nothing', async () => {
    const order = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product: ids.desk, quantity: 1 }, { product: ids.pen, quantity: 2 }] });
    const [desk] = await lineIds(order);
    await t.api('POST', '/api/query/SaleOrder', { limit: 1 }); // the key is remembered: no credential stamp during the call
    const before = await databaseFingerprint(t);
    let answer: Record<string, any> = {};
    const { statements } = await t.countStatements(async () => {
      answer = await effect('SaleOrderLine', { id: desk, vals: { quantity: 3, price_unit: 120, subtotal: 120 }, field_name: 'quantity' });
    });
    expect(answer).toEqual({ product_qty: 3, subtotal: 360, order: { id: order, amount_total: 365, amount_total_company: 365 } });
    // Nothing written: same rows and values everywhere, no data-changing statement, all of it in a read-only transaction.
    expect(await databaseFingerprint(t)).toEqual(before);
    expect(writeStatements(statements)).toEqual([]);
    expect(statements.map((s) => s.toLowerCase())).toContain('set transaction read only');

    expect((await t.api('PUT', `/api/update/SaleOrderLine/${desk}`, { quantity: 3, price_unit: 120, ...answer })).statusCode).toBe(200);
    expect(await fetch('SaleOrderLine', desk, ['product_qty', 'subtotal'])).toMatchObject({ product_qty: 3, subtotal: 360 });
    expect(await fetch('SaleOrder', order, ['amount_total', 'amount_total_company'])).toMatchObject({ amount_total: 365, amount_total_company: 365 });
  });

  it('changing the unit converts the price (a typed price included) and updates subtotal and total', async () => {
    const order = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product: ids.flour, quantity: 500, price_unit: 2 }] });
    const [line] = await lineIds(order);
    const answer = await effect('SaleOrderLine', { id: line, vals: { uom: ids.uom_g, quantity: 500, price_unit: 2 }, field_name: 'uom' });
    // 2.40 per kg is 0.0024 per g: 500 g cost 1.20 and are 0.5 kg.
    expect(answer).toEqual({ price_unit: 0.0024, product_qty: 0.5, subtotal: 1.2, order: { id: order, amount_total: 1.2, amount_total_company: 1.2 } });
    expect((await t.api('PUT', `/api/update/SaleOrderLine/${line}`, { uom: ids.uom_g, quantity: 500, ...answer })).statusCode).toBe(200);
    expect(await fetch('SaleOrderLine', line, ['price_unit', 'product_qty', 'subtotal'])).toMatchObject({ price_unit: 0.0024, product_qty: 0.5, subtotal: 1.2 });
    expect((await fetch('SaleOrder', order, ['amount_total'])).amount_total).toBe(1.2);
  });

  it('a typed price stands while the quantity changes; a unit of another category is refused (400) and nothing is written', async () => {
    const order = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product: ids.desk, quantity: 1 }] });
    const [line] = await lineIds(order);
    const answer = await effect('SaleOrderLine', { id: line, vals: { price_unit: 99.5, quantity: 2 }, field_name: 'quantity' });
    expect(answer).toMatchObject({ subtotal: 199, order: { amount_total: 199 } });
    expect(answer).not.toHaveProperty('price_unit');

    const before = await databaseFingerprint(t);
    const res = await t.api('POST', '/api/ui-effect/SaleOrderLine', { id: line, vals: { uom: ids.uom_kg }, field_name: 'uom' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'UserError', detail: expect.stringMatching(/units belong to different categories/) });
    expect(await databaseFingerprint(t)).toEqual(before);
  });

  it('refuses a product the caller cannot see like a missing one, a wrong value naming its field, and an unknown field_name', async () => {
    const order = await create('SaleOrder', { customer: ids.customer });
    const missing = await t.api('POST', '/api/ui-effect/SaleOrderLine', { vals: { order, product: 999_999 }, field_name: 'product' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'ValidationError', detail: "Field 'product': Product 999999 does not exist" });
    const wrong = await t.api('POST', '/api/ui-effect/SaleOrderLine', { vals: { order, quantity: 'three' }, field_name: 'quantity' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().detail).toMatch(/field 'quantity'/);
    const unknown = await t.api('POST', '/api/ui-effect/SaleOrderLine', { vals: {}, field_name: 'nope' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().detail).toMatch(/field_name/);
    expect((await t.api('POST', '/api/ui-effect/SaleOrderLine', { id: 999_999, vals: {}, field_name: 'quantity' })).statusCode).toBe(404);
  });
});

describe('ui-effect and the caller\'s rights', () => {
  it('needs the write right on a saved record and the create right for a new one; a rule hiding the record is a 404', async () => {
    const order = await create('SaleOrder', { customer: ids.customer });
    const line = await create('SaleOrderLine', { order, product: ids.pen, quantity: 2 });
    const hiddenOrder = await create('SaleOrder', { customer: ids.customer, note: 'hidden from editors' });
    const hiddenLine = await create('SaleOrderLine', { order: hiddenOrder, product: ids.pen, quantity: 1 });
    const keys = await t.run(async () => {
      const editors = await Group.create({ name: 'Line editors', identifier: 'test.group_line_editors' });
      const readers = await Group.create({ name: 'Line readers', identifier: 'test.group_line_readers' });
      const read = { read_perm: true, write_perm: false, create_perm: false, delete_perm: false };
      await ModelAccess.create_many([
        { name: 'editors: lines', model: 'SaleOrderLine', group: editors.id, ...read, write_perm: true },
        { name: 'editors: orders', model: 'SaleOrder', group: editors.id, ...read },
        { name: 'editors: products', model: 'Product', group: editors.id, ...read },
        { name: 'readers: lines', model: 'SaleOrderLine', group: readers.id, ...read },
        { name: 'readers: orders', model: 'SaleOrder', group: readers.id, ...read },
        { name: 'readers: products', model: 'Product', group: readers.id, ...read },
      ]);
      await RecordRule.create({ name: 'editors: not that line', model: 'SaleOrderLine', filter: `~Q(id=${hiddenLine})`, groups: [editors.id] });
      const editor = await createServiceAccountKey({ name: 'line editor', groups: ['core.group_user', 'test.group_line_editors'] });
      const reader = await createServiceAccountKey({ name: 'line reader', groups: ['core.group_user', 'test.group_line_readers'] });
      return { editor: editor.key, reader: reader.key };
    });
    const as = (key: string, body: Record<string, unknown>) =>
      t.api('POST', '/api/ui-effect/SaleOrderLine', body, { authorization: `Bearer ${key}` });
    const before = await databaseFingerprint(t);

    const edited = await as(keys.editor, { id: line, vals: { quantity: 4 }, field_name: 'quantity' });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json().subtotal).toBe(10);
    const fresh = await as(keys.editor, { vals: { order, product: ids.desk }, field_name: 'product' });
    expect(fresh.statusCode, fresh.body).toBe(403);
    expect(fresh.json().error).toBe('AccessError');
    const hidden = await as(keys.editor, { id: hiddenLine, vals: { quantity: 4 }, field_name: 'quantity' });
    expect(hidden.statusCode, hidden.body).toBe(404);
    const readOnly = await as(keys.reader, { id: line, vals: { quantity: 4 }, field_name: 'quantity' });
    expect(readOnly.statusCode, readOnly.body).toBe(403);
    expect(readOnly.json().error).toBe('AccessError');

    expect(await databaseFingerprint(t)).toEqual(before);
  });
});

describe('ui-effect on an order', () => {
  it('a new order with new lines: every line computed, the total of the lines, the defaults; saving stores the answer', async () => {
    const vals = { customer: ids.customer, order_lines: [{ product: ids.desk, quantity: 2 }, { product: ids.pen }] };
    const answer = await effect('SaleOrder', { vals, field_name: 'order_lines' });
    expect(answer).toMatchObject({
      amount_total: 242.5, amount_total_company: 242.5, currency_rate: 1,
      currency: { id: ids.USD }, company: { id: ids.company }, stage: { display_name: 'Quotation' },
      date_order: new Date().toISOString().slice(0, 10),
      order_lines: [
        { product: ids.desk, quantity: 2, name: 'Desk', price_unit: 120, subtotal: 240, uom: { display_name: 'Units' } },
        { product: ids.pen, quantity: 1, name: 'Pen', price_unit: 2.5, subtotal: 2.5 },
      ],
    });
    // A new order has no reference yet: it is numbered from its id once saved.
    expect(answer).not.toHaveProperty('name');

    const id = await create('SaleOrder', { ...vals, ...answer });
    const { order_lines: answeredLines, ...own } = answer;
    expect(asIds(await fetch('SaleOrder', id, Object.keys(own)))).toMatchObject(asIds(own));
    const lines = (await t.api('POST', '/api/query/SaleOrderLine', { filter_str: `Q(order=${id})`, fields: ['name', 'price_unit', 'quantity', 'subtotal', 'product_qty'], order_by: ['id ASC'] })).json();
    expect(lines).toEqual(answeredLines.map((l: Record<string, any>) => expect.objectContaining({ name: l.name, price_unit: l.price_unit, quantity: l.quantity, subtotal: l.subtotal, product_qty: l.product_qty })));
  });

  it('a saved order whose form changed a line: the line is recomputed and the total follows; unchanged lines come back as sent', async () => {
    const order = await create('SaleOrder', { customer: ids.customer, order_lines: [{ product: ids.desk, quantity: 1 }, { product: ids.pen, quantity: 2 }] });
    const [desk, pen] = await lineIds(order);
    const answer = await effect('SaleOrder', { id: order, vals: { order_lines: [{ id: desk, quantity: 2 }, pen] }, field_name: 'order_lines' });
    expect(answer).toEqual({
      amount_total: 245, amount_total_company: 245,
      order_lines: [{ id: desk, quantity: 2, product_qty: 2, subtotal: 240 }, pen],
    });
    expect((await t.api('PUT', `/api/update/SaleOrder/${order}`, answer)).statusCode).toBe(200);
    expect(await fetch('SaleOrder', order, ['amount_total'])).toMatchObject({ amount_total: 245 });
    expect(await lineIds(order)).toEqual([desk, pen]);
  });

  it('the customer effect moves the order to the customer’s company when the caller works there; currency, rate and totals follow', async () => {
    const { european, customer, uid } = await t.run(async () => {
      const company = await Company.create({ name: 'Acme Europe', currency: ids.EUR });
      const contact = await modelOf('Contact').create({ name: 'Berlin Office Supplies', is_company: true, company: company.id });
      const admin = await User.query({ identifier: 'core.user_admin' }).first();
      return { european: company.id, customer: contact.id, uid: admin!.id };
    });
    // No salesperson: the admin works for the first company only, and would keep the order there.
    const order = await create('SaleOrder', { customer: ids.customer, user: null, order_lines: [{ product: ids.desk, quantity: 1 }] });
    const [line] = await lineIds(order);
    const vals = { customer, order_lines: [line] };
    const asCaller = (companyIds: number[]) => ({ uid, companyId: ids.company, companyIds });

    // Working for both companies: the order moves, its currency becomes the company's, the line follows.
    const answer = await t.run(async () => uiEffect(currentEnv().registry.meta('SaleOrder'), { id: order, vals, field_name: 'customer' }), asCaller([ids.company, european]));
    expect(answer).toEqual({
      company: { id: european, display_name: 'Acme Europe' },
      currency: { id: ids.EUR, display_name: 'EUR' }, company_currency: { id: ids.EUR, display_name: 'EUR' },
      order_lines: [{ id: line, company: { id: european, display_name: 'Acme Europe' }, currency: { id: ids.EUR, display_name: 'EUR' } }],
    });
    // The rate (1 EUR in the new company's currency) and the company total did not change: not in the answer.
    // Only for a company of the caller (a write would refuse any other), and one its salesperson works for.
    const outside = await t.run(async () => uiEffect(currentEnv().registry.meta('SaleOrder'), { id: order, vals, field_name: 'customer' }), asCaller([ids.company]));
    expect(outside).toEqual({});
    const withSalesperson = await t.run(async () => uiEffect(currentEnv().registry.meta('SaleOrder'), { id: order, vals: { ...vals, user: uid }, field_name: 'customer' }), asCaller([ids.company, european]));
    expect(withSalesperson).toEqual({});

    await t.run(async () => {
      const meta = currentEnv().registry.meta('SaleOrder');
      await meta.cls.browse([order]).then(([o]) => o!.write({ ...vals, ...answer }));
    }, asCaller([ids.company, european]));
    // Read as the platform: the order left the companies the test's key sees.
    const stored = (model: string, id: number, fields: string[]) => t.run(async () => (await modelOf(model).query({ id }).read(fields))[0]!);
    expect(asIds(await stored('SaleOrder', order, ['company', 'currency', 'company_currency', 'currency_rate', 'amount_total_company'])))
      .toMatchObject({ company: european, currency: ids.EUR, company_currency: ids.EUR, currency_rate: 1, amount_total_company: 120 });
    expect(asIds(await stored('SaleOrderLine', line, ['company', 'currency']))).toMatchObject({ company: european, currency: ids.EUR });
  });
});

describe('the discount wizard', () => {
  it('describes its dialog, in French too', async () => {
    const res = await t.api('POST', '/api/action-meta/SaleOrder/action_apply_discount', { context: { active_ids: [] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      model: 'SaleOrder', method: 'action_apply_discount', title: 'Apply a discount',
      fields: { discount: { type: 'Float', label: 'Discount (%)', required: true, default: 10, precision: 2 } },
      arch: [{ field: { name: 'discount' } }],
      defaults: { discount: 10 },
    });
    const fr = await t.run(async () => (await Language.query({ code: 'fr' }).with_archived().first())!.id);
    expect((await t.api('PUT', `/api/update/Language/${fr}`, { active: true })).statusCode).toBe(200);
    const french = (await t.api('POST', '/api/action-meta/SaleOrder/action_apply_discount', {}, { 'accept-language': 'fr' })).json();
    expect(french).toMatchObject({ title: 'Appliquer une remise', fields: { discount: { label: 'Remise (%)' } } });
  });

  it('lowers the unit price of every line of the selected orders; the inputs are checked before it runs', async () => {
    const a = await create('SaleOrder', { customer: ids.customer, note: 'discount A', order_lines: [{ product: ids.desk, quantity: 1 }, { product: ids.pen, quantity: 4 }] });
    const b = await create('SaleOrder', { customer: ids.customer, note: 'discount B', order_lines: [{ product: ids.desk, quantity: 2 }] });
    const run = (inputs: Record<string, unknown>) => t.api('POST', '/api/execute/SaleOrder/action_apply_discount', {
      selection: { filter_str: "Q(note__startswith='discount ')" }, request_body: { inputs, context: {} },
    });
    const before = await databaseFingerprint(t);
    for (const [inputs, detail] of [
      [{ discount: null }, "Field 'discount' of Apply a discount is required"],
      [{ discount: 'ten' }, /field 'discount' of SaleOrder.action_apply_discount: expected a number/],
      [{ discount: 150 }, /at most 100/],
    ] as const) {
      const res = await run(inputs);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().detail).toMatch(detail);
    }
    expect(await databaseFingerprint(t)).toEqual(before);

    const res = await run({ discount: 10 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-action-close']).toBe('1');
    expect(res.headers['x-action-reload']).toBe('1');
    expect((await fetch('SaleOrder', a, ['amount_total'])).amount_total).toBe(117); // (120 + 10) × 0.9
    expect((await fetch('SaleOrder', b, ['amount_total'])).amount_total).toBe(216);
    // Left out, the input takes its declared default (10 %).
    expect((await run({})).statusCode).toBe(200);
    expect((await fetch('SaleOrder', b, ['amount_total'])).amount_total).toBe(194.4);
  });
});
