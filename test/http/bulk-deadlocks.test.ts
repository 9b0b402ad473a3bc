/**
 * Bulk writes take their row locks in one global order (issue 25 item 4) — ascending ids, a record's
 * owner before the record — so two of them never deadlock: concurrent bulk updates by selection
 * over overlapping sets, per-record bulk updates listing the same records in opposite orders,
 * imports matching their rows by e-mail in shuffled orders, resequences, link rewrites, recomputes
 * of parents, orders rewritten with their lines against their lines written alone, all at once
 * against one database. Every call must answer 2xx, and PostgreSQL must count no deadlock for the database
 * (`pg_stat_database.deadlocks`: the retry of a deadlocked unit of work would hide it from the
 * answers, not from the counter).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import type { Model } from '../../src/orm/model.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const CONTACTS = 1_200;
const ROUNDS = 6;
const TASKS = 150;
const ORDERS = 40;

let t: TestDatabase;
let ids: number[];
let admin: pg.Client;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  ids = await t.run(async () => (await Contact.create_many(Array.from({ length: CONTACTS }, (_, i) => ({
    name: `Lock ${i}`, email: `lock${i}@deadlock.test`, phone: `${i}`,
  })))).map((r) => r.id));
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await t.api('POST', '/api/query/Contact', { limit: 1 }); // registry and key warm
}, 120_000);
afterAll(async () => {
  await admin?.end();
  await t?.close();
});

/** Deadlocks PostgreSQL has detected in the test database so far. */
async function deadlocks(): Promise<number> {
  // The statistics are sent to the collector at the end of each transaction, not at once.
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await admin.query<{ deadlocks: string }>('SELECT deadlocks FROM pg_stat_database WHERE datname = $1', [t.name]);
  return Number(rows[0]!.deadlocks);
}

/** A deterministic shuffle (the same run reproduces the same orders). */
function shuffled<T>(list: readonly T[], seed: number): T[] {
  const out = [...list];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The status of every call `run` makes, through `t.api`; what is not 2xx is printed. */
async function load(clients: number, client: (k: number, call: (method: 'POST' | 'PUT' | 'DELETE', url: string, body: unknown) => Promise<any>) => Promise<void>) {
  const before = await deadlocks();
  const statuses: number[] = [];
  const call = async (method: 'POST' | 'PUT' | 'DELETE', url: string, body: unknown) => {
    const res = await t.api(method, url, body);
    statuses.push(res.statusCode);
    if (res.statusCode >= 300) console.log(url, res.statusCode, res.body.slice(0, 200));
    return res;
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: clients }, (_, k) => client(k, call)));
  const ms = Math.round(performance.now() - start);
  // A backend hands its counters to the statistics once idle, at most once a second.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const found = (await deadlocks()) - before;
  console.log(`${statuses.length} calls in ${ms} ms, ${statuses.filter((s) => s >= 300).length} not 2xx, ${found} deadlocks`);
  return { failed: statuses.filter((s) => s >= 300), found };
}

describe('concurrent bulk writes over the same rows never deadlock', () => {
  it('contacts: bulk updates by selection and per record, imports matched by e-mail, in clashing orders', async () => {
    // Overlapping halves of the rows: every pair of clients shares hundreds of records.
    const half = (k: number) => ids.slice((k * CONTACTS) / 8, (k * CONTACTS) / 8 + CONTACTS / 2);
    const { failed, found } = await load(10, async (k, call) => {
      for (let round = 0; round < ROUNDS; round++) {
        const set = half((k + round) % 5);
        switch ((k + round) % 4) {
          case 0: // by selection (`UPDATE … WHERE id = ANY`)
            await call('PUT', '/api/bulk-update/Contact', { selection: { ids: shuffled(set, k * 31 + round) }, vals: { mobile: `s${k}.${round}` } });
            break;
          case 1: // each record its own values (`UPDATE … FROM unnest`), listed backwards
            await call('PUT', '/api/bulk-update/Contact', [...set].reverse().map((id, i) => ({ id, mobile: `r${k}.${round}.${i}` })));
            break;
          default: { // an import matching its rows by e-mail, in a shuffled order
            const rows = shuffled(set, k * 17 + round).map((id) => [`lock${ids.indexOf(id)}@deadlock.test`, `i${k}.${round}`]);
            const res = await call('POST', '/api/import/Contact', { fields: ['email', 'notes'], data: [['email', 'notes'], ...rows], match_fields: ['email'] });
            if (res.statusCode === 200) expect(res.json().summary).toMatchObject({ updated: set.length, errors: 0 });
          }
        }
      }
    });
    expect(failed).toEqual([]);
    expect(found).toBe(0);
  }, 180_000);

  it('tasks: resequences, tag rewrites by selection, subtasks whose changes recompute their parents, per-record updates', async () => {
    const { project, parents, subtasks, tags } = await t.run(async () => {
      const project = (await ProjectProject.create({ name: 'Deadlock project' })).id;
      const tags = (await ProjectTag.create_many([{ name: 'dl a' }, { name: 'dl b' }])).map((r) => r.id);
      const parents = (await ProjectTask.create_many(Array.from({ length: TASKS }, (_, i) => ({
        name: `DL ${i}`, project, sequence: (i * 7) % TASKS, subtasks: [1, 2, 3].map((n) => ({ name: `DL ${i}.${n}`, project })),
      })))).map((r) => r.id);
      const subtasks = await ProjectTask.query({ parent__in: parents }).ids();
      return { project, parents, subtasks, tags };
    });
    const { failed, found } = await load(8, async (k, call) => {
      for (let round = 0; round < ROUNDS; round++) {
        const order = shuffled(parents, k * 13 + round);
        switch ((k + round) % 4) {
          case 0: // renumbers every parent (`UPDATE … FROM unnest` in the list's new order)
            await call('POST', '/api/resequence/ProjectTask', { dropped_column_id: order[0], after_column_id: order[1], scope_filter: `Q(project=${project}) & Q(parent=None)` });
            break;
          case 1: // the same values and new tags on every parent: an UPDATE and a link rewrite
            await call('PUT', '/api/bulk-update/ProjectTask', { selection: { ids: order }, vals: { priority: String(round % 3), tags: [tags[round % 2]] } });
            break;
          case 2: // subtasks archived or restored, backwards: their parents' counts are recomputed
            await call('PUT', '/api/bulk-update/ProjectTask', [...subtasks].reverse().filter((_, i) => i % 2 === round % 2).map((id) => ({ id, active: round % 4 < 2 })));
            break;
          default: // each parent its own hours, shuffled: their remaining hours are recomputed
            await call('PUT', '/api/bulk-update/ProjectTask', order.map((id, i) => ({ id, planned_hours: i + k, effective_hours: round })));
        }
      }
    });
    expect(failed).toEqual([]);
    expect(found).toBe(0);
  }, 180_000);

  it('orders: rewritten with their lines, against their lines written alone (whose subtotals recompute the orders)', async () => {
    const customer = (await t.run(() => Contact.create({ name: 'Deadlock customer' }))).id;
    const products = (await t.api('POST', '/api/bulk-create/Product', [{ name: 'DL W', list_price: 2.5 }, { name: 'DL G', list_price: 10 }])).json().map((r: { id: number }) => r.id);
    const created = await t.api('POST', '/api/bulk-create/SaleOrder', Array.from({ length: ORDERS }, () => ({
      customer, order_lines: [1, 2, 3].map((q) => ({ product: products[q % 2], quantity: q })),
    })));
    expect(created.statusCode, created.body.slice(0, 300)).toBe(200);
    const orders: number[] = created.json().map((r: { id: number }) => r.id);
    const lines = await t.run(async () => (await modelOf<typeof Model>('SaleOrderLine').query({ order__in: orders }).read(['order']))
      .map((l) => ({ id: l.id as number, order: (l.order as { id: number }).id })));
    const { failed, found } = await load(6, async (k, call) => {
      for (let round = 0; round < 4; round++) {
        if ((k + round) % 2) { // the orders (locked first), then their lines
          await call('PUT', '/api/bulk-update/SaleOrder', shuffled(orders, k + round).map((id) => ({
            id, note: `n${k}.${round}`, order_lines: lines.filter((l) => l.order === id).map((l) => ({ id: l.id, quantity: 1 + ((k + round + l.id) % 5) })),
          })));
        } else { // the lines, backwards: their orders' totals follow
          await call('PUT', '/api/bulk-update/SaleOrderLine', [...lines].reverse().map((l) => ({ id: l.id, quantity: 2 + ((k + round + l.id) % 3) })));
        }
      }
    });
    expect(failed).toEqual([]);
    expect(found).toBe(0);
    // The totals agree with the lines that won.
    const stored = await t.run(() => modelOf<typeof Model>('SaleOrder').query({ id__in: orders }).read(['amount_total', 'order_lines.subtotal']));
    for (const o of stored) expect(o.amount_total).toBe((o.order_lines as { subtotal: number }[]).reduce((sum, l) => sum + l.subtotal, 0));
  }, 180_000);
});
