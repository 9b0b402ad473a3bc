/**
 * States guard their transitions and lock what they promise (issue 25 item 9): a confirmed sales
 * order cannot be confirmed again, and its customer, currency, dates and lines are refused on
 * write by the server (`SaleOrder._state_locks`), through every path — the order's own update, a
 * line's update, create and delete, a bulk update, an API method that writes lines; what the
 * state does not lock (the note, the stage: Cancel) still changes, and once cancelled the order
 * is editable again. A closed task is not closed again. And a new task starts in the first stage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let customer: number;
let product: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  customer = await create('Contact', { name: 'Locked Customer' });
  product = await create('Product', { name: 'Locked Lamp', list_price: 30 });
}, 90_000);
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

const confirm = (id: number) => t.api('POST', '/api/execute/SaleOrder/action_confirm', { ids: [id] });

async function stageId(model: string, name: string): Promise<number> {
  const res = await t.api('POST', `/api/query/${model}`, { fields: ['id'], filter_str: `Q(name='${name}')` });
  return (res.json() as { id: number }[])[0]!.id;
}

/** A confirmed order of one line: its id, its line's id and its name. */
async function confirmedOrder(): Promise<{ id: number; line: number; name: string }> {
  const id = await create('SaleOrder', { customer, order_lines: [{ product, quantity: 2 }] });
  const res = await confirm(id);
  expect(res.statusCode, res.body).toBe(200);
  const order = await fetch('SaleOrder', id, ['name', 'order_lines.id']);
  return { id, line: order.order_lines[0].id, name: order.name };
}

describe('a confirmed sales order', () => {
  it('cannot be confirmed again: a 400 naming the order and its stage, and nothing written', async () => {
    const { id, name } = await confirmedOrder();
    const before = await fetch('SaleOrder', id, ['stage.name', 'updated_date']);
    expect(before.stage.name).toBe('Sales Order');
    const again = await confirm(id);
    expect(again.statusCode, again.body).toBe(400);
    expect(again.json().error).toBe('UserError');
    expect(again.json().detail).toBe(`Sales Order ${name} is locked in Stage "Sales Order": Confirm cannot run there`);
    expect((await fetch('SaleOrder', id, ['updated_date'])).updated_date).toBe(before.updated_date);
    // A quotation still confirms, and a selection with one confirmed order is refused whole.
    const quotation = await create('SaleOrder', { customer });
    const mixed = await t.api('POST', '/api/execute/SaleOrder/action_confirm', { ids: [quotation, id] });
    expect(mixed.statusCode, mixed.body).toBe(400);
    expect((await fetch('SaleOrder', quotation, ['stage.name'])).stage.name).toBe('Quotation');
    expect((await confirm(quotation)).statusCode).toBe(200);
  });

  it('refuses writes of what it promises (customer, currency, date, lines) and accepts the rest', async () => {
    const { id, line, name } = await confirmedOrder();
    const other = await create('Contact', { name: 'Another Customer' });
    const refusals: [string, string, unknown][] = [
      ['PUT', `/api/update/SaleOrder/${id}`, { customer: other }],
      ['PUT', `/api/update/SaleOrder/${id}`, { date_order: '2020-01-01', note: 'and a note' }],
      ['PUT', `/api/update/SaleOrder/${id}`, { order_lines: [{ product, quantity: 5 }] }],
      ['PUT', `/api/update/SaleOrderLine/${line}`, { quantity: 9 }],
      ['POST', '/api/create/SaleOrderLine', { order: id, product, quantity: 1 }],
      ['DELETE', `/api/delete/SaleOrderLine/${line}`, undefined],
      ['PUT', '/api/bulk-update/SaleOrder', [{ id, customer: other }]],
      ['POST', '/api/execute/SaleOrder/action_apply_discount', { ids: [id], request_body: { inputs: { discount: 10 } } }],
    ];
    for (const [method, url, body] of refusals) {
      const res = await t.api(method as 'PUT', url, body);
      expect(res.statusCode, `${method} ${url} ${res.body}`).toBe(400);
      expect(res.json().error, res.body).toBe('UserError');
      expect(res.json().detail, res.body).toContain(`Sales Order ${name} is locked in Stage "Sales Order"`);
    }
    expect((await t.api('PUT', `/api/update/SaleOrder/${id}`, { customer: other })).json().detail)
      .toBe(`Sales Order ${name} is locked in Stage "Sales Order": Customer cannot be changed`);
    expect((await t.api('PUT', `/api/update/SaleOrderLine/${line}`, { quantity: 9 })).json().detail)
      .toBe(`Sales Order ${name} is locked in Stage "Sales Order": its order lines cannot be changed`);
    const kept = await fetch('SaleOrder', id, ['customer', 'date_order', 'note', 'amount_total', 'order_lines.quantity', 'order_lines.price_unit']);
    expect(kept).toMatchObject({ customer: { id: customer }, note: null, amount_total: 60 });
    expect(kept.order_lines).toEqual([expect.objectContaining({ quantity: 2, price_unit: 30 })]);
    // What the state does not lock still changes; a bulk update judges each record by its own values.
    const quotation = await create('SaleOrder', { customer });
    const bulk = await t.api('PUT', '/api/bulk-update/SaleOrder', [{ id, note: 'Deliver on Monday' }, { id: quotation, customer: other }]);
    expect(bulk.statusCode, bulk.body).toBe(200);
    expect((await fetch('SaleOrder', id, ['note'])).note).toBe('Deliver on Monday');
    expect((await fetch('SaleOrder', quotation, ['customer'])).customer.id).toBe(other);
  });

  it('moving a line of a quotation onto a confirmed order is refused too', async () => {
    const { id } = await confirmedOrder();
    const quotation = await create('SaleOrder', { customer, order_lines: [{ product }] });
    const [line] = (await fetch('SaleOrder', quotation, ['order_lines.id'])).order_lines;
    const res = await t.api('PUT', `/api/update/SaleOrderLine/${line.id}`, { order: id });
    expect(res.statusCode, res.body).toBe(400);
    expect((await fetch('SaleOrderLine', line.id, ['order'])).order.id).toBe(quotation);
    // Lines of a quotation stay editable.
    expect((await t.api('PUT', `/api/update/SaleOrderLine/${line.id}`, { quantity: 4 })).statusCode).toBe(200);
  });

  it('is editable again once cancelled (action_cancel, once; the stage itself is not locked)', async () => {
    const { id, line, name } = await confirmedOrder();
    const cancel = () => t.api('POST', '/api/execute/SaleOrder/action_cancel', { ids: [id] });
    expect((await cancel()).statusCode).toBe(200);
    expect((await fetch('SaleOrder', id, ['stage.name'])).stage.name).toBe('Cancelled');
    expect((await cancel()).json().detail).toBe(`Sales Order ${name} is locked in Stage "Cancelled": Cancel cannot run there`);
    const res = await t.api('PUT', `/api/update/SaleOrderLine/${line}`, { quantity: 7 });
    expect(res.statusCode, res.body).toBe(200);
    expect((await fetch('SaleOrder', id, ['amount_total'])).amount_total).toBe(210);
    expect((await confirm(id)).statusCode).toBe(200);
    // The stage is not locked: a confirmed order may be moved to another stage by a write too.
    const cancelled = await stageId('SaleStage', 'Cancelled');
    expect((await t.api('PUT', `/api/update/SaleOrder/${id}`, { stage: cancelled })).statusCode).toBe(200);
  });

  it('model-info lists the locks for the web client', async () => {
    const res = await t.api('GET', '/api/model-info/SaleOrder');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().state_locks).toEqual([{
      when: 'Q(stage__is_confirmed=True)',
      fields: ['customer', 'company', 'currency', 'currency_rate', 'date_order', 'order_lines'],
      methods: ['action_confirm', 'action_update_rate', 'action_apply_discount'],
    }, { when: 'Q(stage__is_cancelled=True)', fields: [], methods: ['action_cancel'] }]);
  });
});

describe('project tasks', () => {
  it('a new task starts in the first stage, through the API and the form’s defaults', async () => {
    const first = await stageId('ProjectStage', 'New');
    const id = await create('ProjectTask', { name: 'Staged from the start' });
    expect((await fetch('ProjectTask', id, ['stage'])).stage).toMatchObject({ id: first, display_name: 'New' });
    // The form of a new record asks ui-effect for its defaults.
    const effect = await t.api('POST', '/api/ui-effect/ProjectTask', { vals: {}, field_name: 'parent' });
    expect(effect.statusCode, effect.body).toBe(200);
    expect(effect.json().stage).toMatchObject({ id: first });
    // An explicit stage (or none) is kept.
    const none = await create('ProjectTask', { name: 'No stage on purpose', stage: null });
    expect((await fetch('ProjectTask', none, ['stage'])).stage).toBeNull();
  });

  it('a closed task is not closed again', async () => {
    const id = await create('ProjectTask', { name: 'Close me once' });
    const close = () => t.api('POST', '/api/execute/ProjectTask/action_close', { ids: [id] });
    expect((await close()).statusCode).toBe(200);
    const again = await close();
    expect(again.statusCode, again.body).toBe(400);
    expect(again.json().detail).toBe('Task Close me once is locked in Stage "Done": Close cannot run there');
  });
});
