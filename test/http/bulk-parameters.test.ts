/**
 * Set-based statements stay under PostgreSQL's 65,535 bound parameters by construction (issue 25
 * item 2): a bulk create, update, delete, clone, import or resequence binds one parameter per
 * column (an array through `unnest`), never one per record and column, whatever the model's
 * width — Monetary amounts rounded to their row's currency included. Proved two ways: the
 * parameters of every statement a call sends are the same for 2 and 200 records (read off the
 * statement texts, `$n` being the n-th parameter), and the real calls answer 200 at `FF_BULK_MAX`
 * (10,000 items) on the widest model of every module, sales orders with nested lines included,
 * with everything written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { currentEnv } from '../../src/orm/env.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import type { Model } from '../../src/orm/model.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const SMALL = 2;
const LARGE = 200;
const BULK_MAX = 10_000; // FF_BULK_MAX's default, which the test app runs with

let t: TestDatabase;
let tags: number[];
let customer: number;
let currencies: { USD: number; JPY: number };
let products: number[];
let uom: number;
let groups: number[];
let company: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  await t.run(async () => {
    tags = (await ProjectTag.create_many([{ name: 'bp a' }, { name: 'bp b' }, { name: 'bp c' }])).map((r) => r.id);
    customer = (await Contact.create({ name: 'Parameter customer', is_company: true })).id;
    const Currency = modelOf<typeof Model>('Currency');
    const found = await Currency.query({ name__in: ['USD', 'JPY'] }).with_archived().read(['name']);
    currencies = Object.fromEntries(found.map((c) => [c.name, c.id])) as typeof currencies;
    await Currency.query({ id__in: Object.values(currencies) }).with_archived().update({ active: true });
    [uom] = await modelOf<typeof Model>('UoM').query({}).limit(1).ids();
    groups = await modelOf<typeof Model>('Group').query({ identifier__in: ['core.group_user', 'project.group_project_user'] }).ids();
    company = currentEnv().companyId ?? (await modelOf<typeof Model>('Company').query({}).limit(1).ids())[0]!;
  });
  products = await created('Product', [{ name: 'BP Widget', list_price: 2.5, uom }, { name: 'BP Gadget', list_price: 10, uom }]);
  await t.api('POST', '/api/query/ProjectTask', { limit: 1 }); // registry and key warm
}, 120_000);
afterAll(async () => { await t?.close(); });

/** The bound parameters of a statement: its highest `$n`. */
function parameters(statement: string): number {
  let most = 0;
  for (const m of statement.matchAll(/\$(\d+)/g)) most = Math.max(most, Number(m[1]));
  return most;
}

async function created(model: string, items: unknown[]): Promise<number[]> {
  const res = await t.api('POST', `/api/bulk-create/${model}`, items);
  expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
  return res.json().map((r: { id: number }) => r.id);
}

/** Every statement of `call` (which must answer 200) and the parameters each binds. */
async function bound(call: () => ReturnType<TestDatabase['api']>): Promise<{ statement: string; parameters: number }[]> {
  const { statements } = await t.countStatements(async () => {
    const res = await call();
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    if (res.json()?.details?.errors) expect(res.json().details.errors.slice(0, 3)).toEqual([]);
  });
  return statements.map((statement) => ({ statement, parameters: parameters(statement) }));
}

/** `run(n)` at SMALL and LARGE records: the same statements bind the same parameters. */
async function flat(label: string, run: (n: number) => Promise<{ statement: string; parameters: number }[]>): Promise<void> {
  const small = await run(SMALL);
  const large = await run(LARGE);
  const most = (list: typeof small) => Math.max(...list.map((s) => s.parameters));
  const widest = large.reduce((a, b) => (b.parameters > a.parameters ? b : a));
  console.log(`${label}: at most ${most(small)} / ${most(large)} parameters per statement for ${SMALL} / ${LARGE} records`);
  expect(most(large), `${label}: the widest statement at ${LARGE} records:\n${widest.statement.slice(0, 600)}`).toBe(most(small));
  if (process.env.BULK_SQL) for (const list of [small, large]) console.log(list.map((s) => `${s.parameters}\t${s.statement.replace(/\s+/g, ' ').slice(0, 200)}`).join('\n'));
}

const productItem = (prefix: string, i: number) => ({
  name: `${prefix} ${i}`, uom, default_code: `${prefix}-${i}`, description: `p ${i}`,
  // Each row rounded to its own currency in the INSERT.
  currency: i % 2 ? currencies.JPY : currencies.USD, list_price: 10.005 + i,
});
const orderItem = (prefix: string, i: number) => ({
  customer, note: `${prefix} ${i}`,
  order_lines: [{ product: products[0], quantity: 1 + (i % 4) }, { product: products[1], quantity: 2 }],
});
const taskItem = (prefix: string, i: number) => ({
  name: `${prefix} ${i}`, planned_hours: 5, effective_hours: i % 3, description: `d ${i}`, priority: String(i % 3),
  deadline: '2031-01-01', sequence: i, tags: [tags[i % 3], tags[(i + 1) % 3]],
  subtasks: [{ name: `${prefix} ${i}.1`, planned_hours: 1 }],
});
const contactItem = (prefix: string, i: number) => ({
  name: `${prefix} ${i}`, email: `${prefix.toLowerCase()}${i}@bp.test`, phone: `+1 555 ${i}`, mobile: `${i}`,
  job_title: 'Buyer', website: 'https://bp.test', street: `${i} Main St`, city: 'Springfield', zip: `${10000 + i}`,
  notes: `contact ${i}`, parent: customer, is_company: false,
});

describe('every set-based statement binds as many parameters for 200 records as for 2', () => {
  it('bulk-create: products (Monetary rounded per row), contacts, tasks with tags and subtasks, orders with lines, users', async () => {
    await flat('bulk-create Product', (n) => bound(() => t.api('POST', '/api/bulk-create/Product', Array.from({ length: n }, (_, i) => productItem(`PC${n}`, i)))));
    await flat('bulk-create Contact', (n) => bound(() => t.api('POST', '/api/bulk-create/Contact', Array.from({ length: n }, (_, i) => contactItem(`CC${n}`, i)))));
    await flat('bulk-create ProjectTask', (n) => bound(() => t.api('POST', '/api/bulk-create/ProjectTask', Array.from({ length: n }, (_, i) => taskItem(`TC${n}`, i)))));
    await flat('bulk-create SaleOrder with lines', (n) => bound(() => t.api('POST', '/api/bulk-create/SaleOrder', Array.from({ length: n }, (_, i) => orderItem(`OC${n}`, i)))));
    await flat('bulk-create SaleOrderLine', async (n) => {
      const [order] = await created('SaleOrder', [{ customer, order_lines: [] }]);
      return bound(() => t.api('POST', '/api/bulk-create/SaleOrderLine', Array.from({ length: n }, (_, i) => ({
        order, product: products[i % 2], quantity: 1 + i, price_unit: 1.005, name: `line ${i}`,
      }))));
    });
    await flat('bulk-create User', (n) => bound(() => t.api('POST', '/api/bulk-create/User', Array.from({ length: n }, (_, i) => ({
      name: `UC${n} ${i}`, email: `uc${n}.${i}@bp.test`, company, companies: [company], groups, lang: 'en',
    })))));
    // Rounded per row to its own currency (USD to the cent, JPY to the yen).
    const stored = await t.run(() => modelOf<typeof Model>('Product').query({ name__in: [`PC${LARGE} 0`, `PC${LARGE} 1`] }).read(['list_price']));
    expect(stored.map((p) => p.list_price).sort()).toEqual([10.01, 11]);
  });

  it('bulk-update: each record its own values (Monetary included), and by a selection', async () => {
    await flat('bulk-update Product (per record)', async (n) => {
      const ids = await created('Product', Array.from({ length: n }, (_, i) => productItem(`PU${n}`, i)));
      return bound(() => t.api('PUT', '/api/bulk-update/Product', ids.map((id, i) => ({ id, list_price: 3.333 + i, description: `u ${i}` }))));
    });
    await flat('bulk-update SaleOrderLine (per record)', async (n) => {
      const orders = await created('SaleOrder', Array.from({ length: n }, (_, i) => orderItem(`OU${n}`, i)));
      const lines = await t.run(() => modelOf<typeof Model>('SaleOrderLine').query({ order__in: orders, product: products[1] }).ids());
      return bound(() => t.api('PUT', '/api/bulk-update/SaleOrderLine', lines.map((id, i) => ({ id, quantity: 3 + (i % 2), price_unit: 1.5 + i }))));
    });
    await flat('bulk-update SaleOrder (per record, lines rewritten)', async (n) => {
      const orders = await created('SaleOrder', Array.from({ length: n }, (_, i) => orderItem(`OW${n}`, i)));
      return bound(() => t.api('PUT', '/api/bulk-update/SaleOrder', orders.map((id, i) => ({
        id, note: `rewritten ${i}`, order_lines: [{ product: products[1], quantity: 1 + i }],
      }))));
    });
    await flat('bulk-update ProjectTask (selection)', async (n) => {
      await created('ProjectTask', Array.from({ length: n }, (_, i) => taskItem(`TS${n}`, i)));
      return bound(() => t.api('PUT', '/api/bulk-update/ProjectTask', {
        selection: { filter_str: `Q(name__startswith='TS${n} ') & Q(parent=None)` }, vals: { planned_hours: 9, tags: [tags[2]] },
      }));
    });
  });

  it('bulk-delete and clone', async () => {
    await flat('bulk-delete SaleOrder', async (n) => {
      const ids = await created('SaleOrder', Array.from({ length: n }, (_, i) => orderItem(`OD${n}`, i)));
      return bound(() => t.api('DELETE', '/api/bulk-delete/SaleOrder', ids));
    });
    await flat('clone SaleOrder', async (n) => {
      const ids = await created('SaleOrder', Array.from({ length: n }, (_, i) => orderItem(`OK${n}`, i)));
      return bound(() => t.api('POST', '/api/clone/SaleOrder', { ids }));
    });
    await flat('clone ProjectTask', async (n) => {
      const ids = await created('ProjectTask', Array.from({ length: n }, (_, i) => taskItem(`TK${n}`, i)));
      return bound(() => t.api('POST', '/api/clone/ProjectTask', { ids }));
    });
  });

  it('import (create, update by match_fields, orders with lines) and resequence', async () => {
    const fields = ['name', 'email', 'phone', 'city', 'notes'];
    const rows = (prefix: string, n: number, note: string) => Array.from({ length: n }, (_, i) => [`${prefix} ${i}`, `${prefix.toLowerCase()}${i}@bpi.test`, `${i}`, 'Springfield', note]);
    await flat('import Contact (create)', (n) => bound(() => t.api('POST', '/api/import/Contact', { fields, data: [fields, ...rows(`IC${n}`, n, 'new')] })));
    await flat('import Contact (update by match_fields)', (n) => bound(() => t.api('POST', '/api/import/Contact', {
      fields, data: [fields, ...rows(`IC${n}`, n, 'again')], match_fields: ['email'],
    })));
    await flat('import SaleOrder with lines', (n) => {
      const data: unknown[][] = [['note', 'customer', 'order_lines/product', 'order_lines/quantity']];
      for (let i = 0; i < n; i++) data.push([`IO${n} ${i}`, 'Parameter customer', 'BP Widget', 1 + (i % 3)], ['', '', 'BP Gadget', 2]);
      return bound(() => t.api('POST', '/api/import/SaleOrder', { fields: data[0], data }));
    });
    await flat('resequence ProjectTask', async (n) => {
      const project = (await t.run(() => ProjectProject.create({ name: `BP reseq ${n}` }))).id;
      const ids = await t.run(async () => (await ProjectTask.create_many(Array.from({ length: n }, (_, i) => ({ name: `R${n} ${i}`, sequence: n - i, project })))).map((r) => r.id));
      return bound(() => t.api('POST', '/api/resequence/ProjectTask', { dropped_column_id: ids[0], after_column_id: null, scope_filter: `Q(project=${project})` }));
    });
  });
});

describe(`bulk calls at FF_BULK_MAX (${BULK_MAX} items) on the widest model of every module`, () => {
  const timed = async <T>(label: string, run: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    const out = await run();
    console.log(`${label}: ${Math.round(performance.now() - start)} ms`);
    return out;
  };
  const count = (model: string, filter: Record<string, unknown>) => t.run(() => modelOf<typeof Model>(model).query(filter).with_archived().count());
  const ok = async (method: 'POST' | 'PUT' | 'DELETE', url: string, body: unknown) => {
    const res = await t.api(method, url, body);
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    return res.json();
  };

  it('sales: products (a Monetary amount rounded per row), updated each its own price, cloned, the clones deleted', async () => {
    const ids = await timed('bulk-create Product', () => created('Product', Array.from({ length: BULK_MAX }, (_, i) => productItem('MP', i))));
    expect(await count('Product', { id__in: ids, uom })).toBe(BULK_MAX);
    await timed('bulk-update Product (per record)', () => ok('PUT', '/api/bulk-update/Product', ids.map((id, i) => ({ id, list_price: 0.005 + i, description: `max ${i}` }))));
    const prices = await t.run(() => modelOf<typeof Model>('Product').query({ id__in: [ids[0], ids[1], ids.at(-1)] }).read(['list_price', 'description']));
    // USD to the cent, JPY to the yen.
    expect(prices.map((p) => [p.list_price, p.description])).toEqual([[0.01, 'max 0'], [1, 'max 1'], [BULK_MAX - 1, `max ${BULK_MAX - 1}`]]);
    const copies = await timed('clone Product', () => ok('POST', '/api/clone/Product', { ids }));
    expect(copies).toHaveLength(BULK_MAX);
    const deleted = await timed('bulk-delete Product', () => ok('DELETE', '/api/bulk-delete/Product', copies.map((c: { id: number }) => c.id)));
    expect(deleted.deleted).toBe(BULK_MAX);
    expect(await count('Product', { name__startswith: 'MP ' })).toBe(BULK_MAX);
  });

  it('sales: an import of products is written in batches of 5,000 records, one INSERT each, whatever the columns', async () => {
    const data = [['name', 'uom', 'currency', 'list_price'], ...Array.from({ length: BULK_MAX }, (_, i) => [`MI ${i}`, String(uom), i % 2 ? 'JPY' : 'USD', 1.005 + i])];
    let answer: any;
    const { statements } = await timed('import Product', () => t.countStatements(async () => {
      answer = await ok('POST', '/api/import/Product', { fields: data[0], data });
    }));
    expect(answer.summary).toMatchObject({ created: BULK_MAX, errors: 0 });
    expect(statements.filter((s) => /^\s*insert into "product"/i.test(s))).toHaveLength(BULK_MAX / 5_000);
    const prices = await t.run(() => modelOf<typeof Model>('Product').query({ name__in: ['MI 0', 'MI 1'] }).read(['name', 'list_price']));
    expect(Object.fromEntries(prices.map((p) => [p.name, p.list_price]))).toEqual({ 'MI 0': 1.01, 'MI 1': 2 });
  });

  it('sales: order lines (the most columns) on one order', async () => {
    const [order] = await created('SaleOrder', [{ customer, order_lines: [] }]);
    await timed('bulk-create SaleOrderLine', () => created('SaleOrderLine', Array.from({ length: BULK_MAX }, (_, i) => ({
      order, product: products[i % 2], quantity: 1 + (i % 5), price_unit: 1.005, name: `max line ${i}`,
    }))));
    expect(await count('SaleOrderLine', { order })).toBe(BULK_MAX);
  });

  it('sales: orders (the most fields), each with a nested line', async () => {
    const orders = await timed('bulk-create SaleOrder with a line each', () => created('SaleOrder', Array.from({ length: BULK_MAX }, (_, i) => ({
      customer, note: `MO ${i}`, order_lines: [{ product: products[i % 2], quantity: 1 + (i % 3) }],
    }))));
    expect(await count('SaleOrderLine', { order__in: orders })).toBe(BULK_MAX);
    const totals = await t.run(() => modelOf<typeof Model>('SaleOrder').query({ id__in: [orders[0], orders.at(-1)] }).read(['amount_total']));
    const last = BULK_MAX - 1;
    expect(Object.fromEntries(totals.map((o) => [o.id, o.amount_total]))).toEqual({ [orders[0]!]: 2.5, [orders.at(-1)!]: (1 + (last % 3)) * (last % 2 ? 10 : 2.5) });
  });

  it('contacts: contacts', async () => {
    const ids = await timed('bulk-create Contact', () => created('Contact', Array.from({ length: BULK_MAX }, (_, i) => contactItem('MC', i))));
    expect(await count('Contact', { id__in: ids, parent: customer, city: 'Springfield' })).toBe(BULK_MAX);
  });

  it('project: tasks with tags', async () => {
    const ids = await timed('bulk-create ProjectTask', () => created('ProjectTask', Array.from({ length: BULK_MAX }, (_, i) => ({ ...taskItem('MT', i), subtasks: [] }))));
    expect(await count('ProjectTask', { id__in: ids, tags: tags[1] })).toBe(Math.ceil((2 * BULK_MAX) / 3));
  });

  it('core: users with companies and groups', async () => {
    const ids = await timed('bulk-create User', () => created('User', Array.from({ length: BULK_MAX }, (_, i) => ({
      name: `MU ${i}`, email: `mu.${i}@bp.test`, company, companies: [company], groups, lang: 'en',
    }))));
    expect(await count('User', { id__in: ids, groups: groups[0] })).toBe(BULK_MAX);
  });
});
