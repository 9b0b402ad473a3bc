/**
 * A new record's own stored computed fields go into its INSERT when they need nothing the INSERT
 * creates (precompute.ts): no reload and no UPDATE of the new record, and the owners of a
 * OneToMany it joins are read off its own link rather than queried. Where the create writes the
 * relation a field depends on, the field is recomputed after the INSERT as before; every path
 * stores the same values.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase } from '../support/test-database.js';
import { type Rec, fixtureDatabase, model, rows } from '../support/orm.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await fixtureDatabase('core', ['orm_computed']);
});
afterAll(async () => {
  await t?.close();
});

const Order = () => model('OrmOrder');
const Line = () => model('OrmOrderLine');

type StoredOrder = { total: number | null; line_count: number | null; net: number | null; label_count: number | null; label_names: string | null };

async function storedOrder(id: number): Promise<StoredOrder> {
  const [row] = await rows<StoredOrder & { total: string | null }>(
    sql`SELECT total, line_count, net, label_count, label_names FROM orm_order WHERE id = ${id}`,
  );
  return { ...row!, total: row!.total === null ? null : Number(row!.total) };
}

/** Runs `fn` in a unit of work and returns its result with the statements it ran. */
async function counted<R>(fn: () => Promise<R>): Promise<{ result: R; statements: string[] }> {
  let result!: R;
  const { statements } = await t.countStatements(() => t.run(async () => {
    result = await fn();
  }));
  return { result, statements };
}

describe('creating records with stored computed fields', () => {
  it('computes the fields of a record without lines into its INSERT: no reload, no UPDATE', async () => {
    const { result: order, statements } = await counted(() => Order().create({ name: 'bare order', discount: 0.1 }) as Promise<Rec>);
    expect(statements.filter((s) => /orm_order\b/.test(s)), statements.join('\n')).toEqual([
      expect.stringMatching(/^INSERT INTO "orm_order"/),
    ]);
    const insert = statements.find((s) => s.startsWith('INSERT INTO "orm_order"'))!;
    for (const column of ['total', 'line_count', 'net', 'label_count', 'label_names']) expect(insert).toContain(`"${column}"`);
    await t.run(async () => {
      expect(await storedOrder(order.id)).toEqual({ total: 0, line_count: 0, net: 0, label_count: 0, label_names: '' });
    });
    // The returned record carries what was stored.
    expect([order.total, order.line_count, order.net, order.label_count]).toEqual([0, 0, 0, 0]);
  });

  it('computes a field depending on a ManyToOne path before the INSERT and recomputes the parent from the link', async () => {
    const order = await t.run(() => Order().create({ name: 'Parent', lines: [{ name: 'first', amount: 5 }] }) as Promise<Rec>);
    const { result: line, statements } = await counted(() => Line().create({ order: order.id, name: 'second', amount: 2.5 }) as Promise<Rec>);
    expect(line.order_name).toBe('Parent');
    // The line: one INSERT, never updated; the order: found from the line's own link (no EXISTS look-up).
    expect(statements.filter((s) => /UPDATE "orm_order_line"/.test(s))).toEqual([]);
    expect(statements.filter((s) => /EXISTS/.test(s)), statements.join('\n')).toEqual([]);
    await t.run(async () => {
      const [stored] = await rows<{ order_name: string }>(sql`SELECT order_name FROM orm_order_line WHERE id = ${line.id}`);
      expect(stored!.order_name).toBe('Parent');
      expect(await storedOrder(order.id)).toMatchObject({ total: 7.5, line_count: 2, net: 7.5 });
    });
  });

  it('recomputes after the INSERT the fields whose relation the create writes (lines, links), with cascades', async () => {
    await t.run(async () => {
      const labels = await model('OrmLabel').create_many([{ name: 'b-label' }, { name: 'a-label' }]);
      const order = (await Order().create({
        name: 'full', discount: 0.5, lines: [{ name: 'x', amount: 10 }, { name: 'y', amount: 30 }], labels: labels.map((l) => l.id),
      })) as Rec;
      expect(await storedOrder(order.id)).toEqual({ total: 40, line_count: 2, net: 20, label_count: 2, label_names: 'a-label, b-label' });
      expect([order.total, order.line_count, order.net, order.label_count]).toEqual([40, 2, 20, 2]);
    });
  });

  it('gives each record of a create_many its own values, and each parent its own recount', async () => {
    await t.run(async () => {
      const [a, b] = (await Order().create_many([{ name: 'A' }, { name: 'B' }])) as Rec[];
      const lines = (await Line().create_many([
        { order: a!.id, amount: 1 }, { order: b!.id, amount: 2 }, { order: b!.id, amount: 3 }, { amount: 4, order: a!.id },
      ])) as Rec[];
      expect(lines.map((l) => l.order_name)).toEqual(['A', 'B', 'B', 'A']);
      expect(await storedOrder(a!.id)).toMatchObject({ total: 5, line_count: 2 });
      expect(await storedOrder(b!.id)).toMatchObject({ total: 5, line_count: 2 });
    });
  });

  it('answers with what a fresh read of the new record gives', async () => {
    await t.run(async () => {
      const order = (await Order().create({ name: 'fresh', discount: 0.2 })) as Rec;
      const [reloaded] = (await Order().browse([order.id])) as Rec[];
      expect(order._values).toEqual(reloaded!._values);
    });
  });
});
