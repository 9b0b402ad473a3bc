/**
 * State locks hold under concurrency (issue 25, "Hardening II"): the check of a record's state
 * locks the rows it reads (`FOR NO KEY UPDATE`), so a second writer waits for the first and then
 * judges the state the first committed. Interleaved deterministically against PostgreSQL: unit of
 * work 1 confirms a quotation and holds its transaction open; request 2 (a line's edit, or a second
 * Confirm) is shown waiting for a lock (`pg_stat_activity`); once 1 commits, 2 is refused — before,
 * both committed: a confirmed order with a changed line, an order confirmed twice. A line edited
 * first and a Confirm after it both pass, in that order.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callMethod } from '../../src/api/call-method.js';
import { currentEnv } from '../../src/orm/env.js';
import type { Model } from '../../src/orm/model.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let admin: pg.Client;
let customer: number;
let product: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  customer = await create('Contact', { name: 'Race Customer' });
  product = await create('Product', { name: 'Race Lamp', list_price: 30 });
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
}, 120_000);
afterAll(async () => {
  await admin?.end();
  await t?.close();
});

async function create(model: string, vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', `/api/create/${model}`, vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

/** A quotation of one line: its id and its line's id. */
async function quotation(): Promise<{ id: number; line: number }> {
  const id = await create('SaleOrder', { customer, order_lines: [{ product, quantity: 2 }] });
  const res = await t.api('POST', `/api/fetch/SaleOrder/${id}`, { fields: ['order_lines.id'] });
  return { id, line: res.json().order_lines[0].id as number };
}

async function stored(order: number): Promise<{ stage: string; quantities: number[] }> {
  const [row] = await t.run(() => modelOf<typeof Model>('SaleOrder').query({ id: order }).read(['stage.name', 'order_lines.quantity']));
  return { stage: (row!.stage as { name: string }).name, quantities: (row!.order_lines as { quantity: number }[]).map((l) => l.quantity) };
}

/** Backends of the test database waiting for a lock right now. */
async function lockWaiters(): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [t.name]);
  return rows[0]!.n;
}

/**
 * Runs `hold` in a unit of work held open (its locks taken, nothing committed) while `request`
 * starts; answers whether the request was seen waiting for a lock before the unit of work
 * committed, and the request's answer after.
 */
async function whileHeld<R>(hold: () => Promise<unknown>, request: () => Promise<R>): Promise<{ waited: boolean; answer: R }> {
  let release!: () => void;
  let held!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (held = r));
  const done = t.run(async () => {
    await hold();
    held();
    await gate;
  });
  await reached;
  const call = request();
  const waited = await waitsForLock(call);
  release();
  await done;
  return { waited, answer: await call };
}

/** Whether a backend waits for a lock before `call` settles (polled for up to 5 s). */
async function waitsForLock(call: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void call.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 100 && !settled; i++) {
    if ((await lockWaiters()) > 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Confirms `order` as `/api/execute` does, in the current unit of work. */
const confirmHere = (order: number) => () => callMethod(currentEnv().registry.meta('SaleOrder'), 'action_confirm', { ids: [order] });

describe('a state lock and a concurrent change of the state', () => {
  it('a line edited while another transaction confirms its order waits, then is refused', async () => {
    const { id, line } = await quotation();
    const { waited, answer } = await whileHeld(confirmHere(id), () => t.api('PUT', `/api/update/SaleOrderLine/${line}`, { quantity: 5 }));
    expect(waited).toBe(true);
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json()).toMatchObject({ error: 'UserError', detail: expect.stringMatching(/is locked in Stage "Sales Order": its order lines cannot be changed/) });
    expect(await stored(id)).toEqual({ stage: 'Sales Order', quantities: [2] });
  });

  it('two Confirms of one quotation: the second waits, then is refused', async () => {
    const { id } = await quotation();
    const { waited, answer } = await whileHeld(confirmHere(id), () => t.api('POST', '/api/execute/SaleOrder/action_confirm', { ids: [id] }));
    expect(waited).toBe(true);
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json()).toMatchObject({ error: 'UserError', detail: expect.stringMatching(/is locked in Stage "Sales Order": Confirm cannot run there/) });
  });

  it('an order’s locked field written while another transaction confirms it waits, then is refused', async () => {
    const { id } = await quotation();
    const other = await create('Contact', { name: 'Race Other Customer' });
    const { waited, answer } = await whileHeld(confirmHere(id), () => t.api('PUT', `/api/update/SaleOrder/${id}`, { customer: other }));
    expect(waited).toBe(true);
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json().detail).toMatch(/is locked in Stage "Sales Order": Customer cannot be changed/);
  });

  it('a line edited first, then a Confirm: the Confirm waits for the edit and both commit, in that order', async () => {
    const { id, line } = await quotation();
    const edit = () => modelOf<typeof Model>('SaleOrderLine').query({ id: line }).update({ quantity: 7 });
    const { waited, answer } = await whileHeld(edit, () => t.api('POST', '/api/execute/SaleOrder/action_confirm', { ids: [id] }));
    expect(waited).toBe(true);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(await stored(id)).toEqual({ stage: 'Sales Order', quantities: [7] });
  });
});
