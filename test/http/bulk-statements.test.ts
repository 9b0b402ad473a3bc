/**
 * Bulk calls are set-based (CONTRACTS C1): the number of SQL statements of a bulk create, update,
 * delete and clone is the same for 1, 100 and 1,000 records — stored computed fields (a task's
 * remaining hours and subtask count, an order line's price, subtotal and currency, the order's
 * total), ManyToMany links and owned OneToMany lines (subtasks, order lines) included. Counted with
 * `t.countStatements` (every statement the database runs, BEGIN and COMMIT included) on a warm key.
 * The counts are printed for the README.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import type { Model } from '../../src/orm/model.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const SIZES = [1, 100, 1000] as const;

let t: TestDatabase;
let tags: number[];
let products: number[];
let customer: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  await t.run(async () => {
    tags = (await ProjectTag.create_many([{ name: 'st a' }, { name: 'st b' }, { name: 'st c' }])).map((r) => r.id);
    customer = (await Contact.create({ name: 'Statement customer' })).id;
  });
  // Through the API: products and orders take the caller's company and its currency.
  products = await bulkCreate('Product', [{ name: 'Widget', list_price: 2.5 }, { name: 'Gadget', list_price: 10 }]);
  // The registry and the remembered key are warm before anything is counted.
  await t.api('POST', '/api/query/ProjectTask', { limit: 1 });
}, 120_000);
afterAll(async () => { await t?.close(); });

/** Runs `call` (which must answer 200) and returns its statement count. */
async function counted(call: () => ReturnType<TestDatabase['api']>): Promise<{ count: number; statements: string[]; body: any }> {
  let body: any;
  const { count, statements } = await t.countStatements(async () => {
    const res = await call();
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    body = res.json();
  });
  return { count, statements, body };
}

const reported: Record<string, number[]> = {};

/** Counts `run(n)` at every size and expects the same number each time. */
async function flat(label: string, run: (n: number) => Promise<{ count: number; statements: string[] }>): Promise<void> {
  const counts: number[] = [];
  const listings: string[][] = [];
  for (const n of SIZES) {
    const { count, statements } = await run(n);
    counts.push(count);
    listings.push(statements);
  }
  reported[label] = counts;
  if (process.env.BULK_SQL) console.log(listings[0]!.map((s) => s.replace(/\s+/g, ' ').slice(0, 160)).join('\n'));
  console.log(`${label}: ${counts.join(' / ')} statements for ${SIZES.join(' / ')} records`);
  expect(counts, `${label}: statements by kind at ${SIZES.join(' / ')} records\n${byKind(listings)}`).toEqual(SIZES.map(() => counts[0]));
}

/** How many statements of each kind (their first words) each listing holds, where they differ. */
function byKind(listings: string[][]): string {
  const kind = (s: string) => s.replace(/\s+/g, ' ').slice(0, 90);
  const kinds = [...new Set(listings.flat().map(kind))];
  return kinds.map((k) => [k, listings.map((l) => l.filter((s) => kind(s) === k).length)] as const)
    .filter(([, n]) => n.some((c) => c !== n[0])).map(([k, n]) => `${n.join(' / ')}  ${k}`).join('\n');
}

const taskItem = (prefix: string, i: number) => ({
  name: `${prefix} ${i}`, planned_hours: 5, effective_hours: i % 3,
  tags: [tags[i % 3], tags[(i + 1) % 3]],
  subtasks: [{ name: `${prefix} ${i}.1`, planned_hours: 1 }, { name: `${prefix} ${i}.2` }],
});
const orderItem = (i: number) => ({
  customer, note: `order ${i}`,
  order_lines: [{ product: products[0], quantity: 1 + (i % 4) }, { product: products[1], quantity: 2 }],
});

/** Records made for a measurement (not counted). */
async function bulkCreate(model: string, items: unknown[]): Promise<number[]> {
  const res = await t.api('POST', `/api/bulk-create/${model}`, items);
  expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
  return res.json().map((r: { id: number }) => r.id);
}
const createTasks = (prefix: string, n: number) => bulkCreate('ProjectTask', Array.from({ length: n }, (_, i) => taskItem(prefix, i)));
const createOrders = (n: number) => bulkCreate('SaleOrder', Array.from({ length: n }, (_, i) => orderItem(i)));

describe('bulk calls cost the same number of statements for 1, 100 and 1,000 records', () => {
  it('bulk-create of tasks with tags, subtasks and computed fields', async () => {
    await flat('bulk-create ProjectTask', async (n) => {
      const res = await counted(() => t.api('POST', '/api/bulk-create/ProjectTask', Array.from({ length: n }, (_, i) => taskItem(`BC${n}`, i))));
      expect(res.body).toHaveLength(n);
      return res;
    });
    // Everything was written: parents, lines, links and the recomputed counts.
    const [last] = await t.run(() => ProjectTask.query({ name: 'BC1000 999' }).read(['subtask_count', 'remaining_hours', 'tags']));
    expect(last).toMatchObject({ subtask_count: 2, remaining_hours: 5, tags: [expect.anything(), expect.anything()] });
    expect(await t.run(() => ProjectTask.query("Q(name__startswith='BC1000 ') & Q(parent=None)").count())).toBe(1000);
  });

  it('bulk-create of sales orders with lines (line prices, subtotals, order totals computed)', async () => {
    await flat('bulk-create SaleOrder', async (n) => {
      const res = await counted(() => t.api('POST', '/api/bulk-create/SaleOrder', Array.from({ length: n }, (_, i) => orderItem(i))));
      expect(res.body).toHaveLength(n);
      return res;
    });
    const totals = await t.run(() => modelOf<typeof Model>('SaleOrder').query("Q(note='order 5')").read(['amount_total']));
    expect(totals).toHaveLength(2);
    expect(totals.map((o) => o.amount_total)).toEqual(totals.map(() => 2 * 2.5 + 2 * 10));
  });

  it('bulk-update with each record its own values, tags and new subtasks', async () => {
    await flat('bulk-update ProjectTask (per record)', async (n) => {
      const ids = await createTasks(`BU${n}`, n);
      return counted(() => t.api('PUT', '/api/bulk-update/ProjectTask', ids.map((id, i) => ({
        id, name: `BU${n} renamed ${i}`, planned_hours: i, tags: [tags[i % 3]], subtasks: [{ name: `BU${n} new ${i}` }],
      }))));
    });
    const [row] = await t.run(() => ProjectTask.query({ name: 'BU1000 renamed 7' }).read(['planned_hours', 'remaining_hours', 'subtask_count', 'subtasks.name']));
    expect(row).toMatchObject({ planned_hours: 7, remaining_hours: 7 - (7 % 3), subtask_count: 1, subtasks: [{ name: 'BU1000 new 7' }] });
  });

  it('bulk-update of order lines (each its own quantity): subtotals and order totals follow', async () => {
    await flat('bulk-update SaleOrderLine (per record)', async (n) => {
      const orders = await createOrders(n);
      const lines = await t.run(() => modelOf<typeof Model>('SaleOrderLine').query({ order__in: orders, product: products[1] }).ids());
      return counted(() => t.api('PUT', '/api/bulk-update/SaleOrderLine', lines.map((id, i) => ({ id, quantity: 3 + (i % 2) }))));
    });
  });

  it('bulk-update by a selection', async () => {
    await flat('bulk-update ProjectTask (selection)', async (n) => {
      await createTasks(`BS${n}`, n);
      const res = await counted(() => t.api('PUT', '/api/bulk-update/ProjectTask', {
        selection: { filter_str: `Q(name__startswith='BS${n} ') & Q(parent=None)` }, vals: { planned_hours: 9, tags: [tags[2]] },
      }));
      expect(res.body.updated).toBe(n);
      return res;
    });
  });

  it('bulk-delete by ids and by a selection (tasks with subtasks, orders with lines)', async () => {
    await flat('bulk-delete ProjectTask (ids)', async (n) => {
      const ids = await createTasks(`BD${n}`, n);
      return counted(() => t.api('DELETE', '/api/bulk-delete/ProjectTask', ids));
    });
    await flat('bulk-delete SaleOrder (selection)', async (n) => {
      const ids = await createOrders(n);
      const res = await counted(() => t.api('DELETE', '/api/bulk-delete/SaleOrder', { ids }));
      expect(res.body.deleted).toBe(n);
      return res;
    });
  });

  it('clone of tasks (tags, subtasks) and of orders (lines)', async () => {
    await flat('clone ProjectTask', async (n) => {
      const ids = await createTasks(`CL${n}`, n);
      const res = await counted(() => t.api('POST', '/api/clone/ProjectTask', { ids }));
      expect(res.body).toHaveLength(n);
      return res;
    });
    const [copy] = await t.run(() => ProjectTask.query({ name: 'CL1000 999 (copy)' }).read(['subtask_count', 'tags', 'subtasks.name']));
    expect(copy).toMatchObject({ subtask_count: 2, subtasks: [{ name: 'CL1000 999.1' }, { name: 'CL1000 999.2' }] });
    await flat('clone SaleOrder', async (n) => {
      const ids = await createOrders(n);
      const res = await counted(() => t.api('POST', '/api/clone/SaleOrder', { ids }));
      expect(res.body).toHaveLength(n);
      return res;
    });
  });

  it('prints the counts', () => {
    console.log(JSON.stringify(reported));
  });
});
