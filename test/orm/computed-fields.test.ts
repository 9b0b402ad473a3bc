/**
 * Computed fields: stored ones (calculate + store + depends) stay true when what they depend on
 * changes — on the same record, through a OneToMany (line amount changed, line added, deleted,
 * moved to another parent), through a ManyToOne, and in cascade; non-stored ones are computed on
 * read; a setter keeps a computed field writable.
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

/** The stored columns of an order as the database holds them. */
async function stored(id: number): Promise<{ total: number | null; line_count: number | null; net: number | null }> {
  const [row] = await rows<{ total: string | null; line_count: number | null; net: number | null }>(
    sql`SELECT total, line_count, net FROM orm_order WHERE id = ${id}`,
  );
  return { total: row!.total === null ? null : Number(row!.total), line_count: row!.line_count, net: row!.net };
}

async function orderWithLines(name: string, amounts: number[], discount = 0): Promise<Rec> {
  return (await Order().create({ name, discount, lines: amounts.map((amount, i) => ({ name: `l${i}`, amount })) })) as Rec;
}

describe('stored computed fields', () => {
  it('are computed and stored when the record is created with its lines', async () => {
    await t.run(async () => {
      const order = await orderWithLines('create', [10, 5.5]);
      expect(await stored(order.id)).toEqual({ total: 15.5, line_count: 2, net: 15.5 });
      expect([order.total, order.line_count, order.net]).toEqual([15.5, 2, 15.5]);
    });
  });

  it('recompute when a dependency on the same record changes (and cascade to fields depending on them)', async () => {
    await t.run(async () => {
      const order = await orderWithLines('discount', [100]);
      await order.write({ discount: 0.25 });
      expect(await stored(order.id)).toEqual({ total: 100, line_count: 1, net: 75 });
    });
  });

  it('recompute when a line’s amount changes', async () => {
    await t.run(async () => {
      const order = await orderWithLines('amount', [10, 20], 0.5);
      const [first] = (await order.lines) as Rec[];
      await first!.write({ amount: 15 });
      expect(await stored(order.id)).toEqual({ total: 35, line_count: 2, net: 17.5 });
    });
  });

  it('recompute when a line is added to the parent', async () => {
    await t.run(async () => {
      const order = await orderWithLines('add', [1]);
      await Line().create({ order: order.id, amount: 2.25 });
      expect(await stored(order.id)).toEqual({ total: 3.25, line_count: 2, net: 3.25 });
    });
  });

  it('recompute when a line is deleted', async () => {
    await t.run(async () => {
      const order = await orderWithLines('delete', [1, 2, 3]);
      const lines = (await order.lines) as Rec[];
      await lines[1]!.unlink();
      expect(await stored(order.id)).toEqual({ total: 4, line_count: 2, net: 4 });
      await Line().query({ order: order.id }).delete();
      expect(await stored(order.id)).toEqual({ total: 0, line_count: 0, net: 0 });
    });
  });

  it('recompute on both parents when a line moves to another parent', async () => {
    await t.run(async () => {
      const a = await orderWithLines('move-a', [10, 20]);
      const b = await orderWithLines('move-b', [1]);
      const [line] = (await a.lines) as Rec[];
      await line!.write({ order: b.id });
      expect(await stored(a.id)).toEqual({ total: 20, line_count: 1, net: 20 });
      expect(await stored(b.id)).toEqual({ total: 11, line_count: 2, net: 11 });
    });
  });

  it('recompute when lines are replaced through the OneToMany field of the parent', async () => {
    await t.run(async () => {
      const order = await orderWithLines('replace', [1, 2]);
      const [keep] = (await order.lines) as Rec[];
      await order.write({ lines: [keep!.id, { name: 'new', amount: 40 }] });
      expect(await stored(order.id)).toEqual({ total: 41, line_count: 2, net: 41 });
    });
  });

  it('recompute after a queryset update of the dependency', async () => {
    await t.run(async () => {
      const order = await orderWithLines('qs-update', [1, 2, 3]);
      expect(await Line().query({ order: order.id }).update({ amount: 7 })).toBe(3);
      expect(await stored(order.id)).toEqual({ total: 21, line_count: 3, net: 21 });
    });
  });

  it('recompute through a ManyToOne: renaming the parent renames the lines’ stored copy', async () => {
    await t.run(async () => {
      const order = await orderWithLines('old name', [1, 2]);
      const lineIds = ((await order.lines) as Rec[]).map((l) => l.id);
      expect(((await Line().browse(lineIds)) as Rec[]).map((l) => l.order_name)).toEqual(['old name', 'old name']);
      await order.write({ name: 'new name' });
      expect(((await Line().browse(lineIds)) as Rec[]).map((l) => l.order_name)).toEqual(['new name', 'new name']);
    });
  });

  it('keep a value written to them without a setter out (the computed value wins)', async () => {
    await t.run(async () => {
      const order = (await Order().create({ name: 'forced', total: 999, lines: [{ amount: 3 }] })) as Rec;
      expect(order.total).toBe(3);
      await order.write({ total: 1234 });
      expect(order.total).toBe(3);
    });
  });

  it('are sortable and filterable in SQL', async () => {
    await t.run(async () => {
      await orderWithLines('sort-small', [1]);
      await orderWithLines('sort-big', [1000]);
      const big = await Order().query("Q(total__gte=1000) & Q(name__startswith='sort-')").order_by('total DESC').all();
      expect(big.map((o) => (o as Rec).name)).toEqual(['sort-big']);
    });
  });
});

describe('stored computed fields through a ManyToMany', () => {
  async function labelled(names: string[]) {
    const labels = (await model('OrmLabel').create_many(names.map((name) => ({ name })))) as Rec[];
    const order = (await Order().create({ name: `labelled ${names.join()}`, labels: labels.map((l) => l.id) })) as Rec;
    return { order, labels };
  }
  const labelColumns = async (id: number) =>
    (await rows<{ label_count: number; label_names: string }>(sql`SELECT label_count, label_names FROM orm_order WHERE id = ${id}`))[0];

  it('recompute when the links change on the record', async () => {
    await t.run(async () => {
      const { order, labels } = await labelled(['l-b', 'l-a']);
      expect(await labelColumns(order.id)).toEqual({ label_count: 2, label_names: 'l-a, l-b' });
      await order.write({ labels: [labels[0]!.id] });
      expect(await labelColumns(order.id)).toEqual({ label_count: 1, label_names: 'l-b' });
    });
  });

  it('recompute when a linked record is renamed', async () => {
    await t.run(async () => {
      const { order, labels } = await labelled(['l-c', 'l-d']);
      await labels[0]!.write({ name: 'l-z' });
      expect(await labelColumns(order.id)).toEqual({ label_count: 2, label_names: 'l-d, l-z' });
    });
  });

  it('recompute when a linked record is deleted', async () => {
    await t.run(async () => {
      const { order, labels } = await labelled(['l-e', 'l-f']);
      await labels[1]!.unlink();
      expect(await labelColumns(order.id)).toEqual({ label_count: 1, label_names: 'l-e' });
    });
  });

  it('recompute when the links are written from the reverse side', async () => {
    await t.run(async () => {
      const { order } = await labelled(['l-g']);
      const other = (await Order().create({ name: 'reverse target' })) as Rec;
      const label = (await model('OrmLabel').create({ name: 'l-h', orders: [order.id, other.id] })) as Rec;
      expect(await labelColumns(order.id)).toEqual({ label_count: 2, label_names: 'l-g, l-h' });
      expect(await labelColumns(other.id)).toEqual({ label_count: 1, label_names: 'l-h' });
      await label.write({ orders: [other.id] });
      expect(await labelColumns(order.id)).toEqual({ label_count: 1, label_names: 'l-g' });
      expect(await labelColumns(other.id)).toEqual({ label_count: 1, label_names: 'l-h' });
    });
  });
});

describe('non-stored computed fields', () => {
  it('are computed on read: on a record, in a queryset read and through the API', async () => {
    let id = 0;
    await t.run(async () => {
      const order = (await Order().create({ name: 'loud' })) as Rec;
      id = order.id;
      expect(await order.shout).toBe('LOUD!');
      await order.write({ name: 'louder' });
      expect(await order.shout).toBe('LOUDER!');
      const [read] = await Order().query({ id }).read(['name', 'shout']);
      expect(read).toMatchObject({ name: 'louder', shout: 'LOUDER!' });
      const cols = await rows<{ column_name: string }>(sql`SELECT column_name FROM information_schema.columns WHERE table_name = 'orm_order'`);
      expect(cols.map((c) => c.column_name)).not.toContain('shout');
      expect(cols.map((c) => c.column_name)).toContain('total');
    });
    const res = await t.api('POST', `/api/fetch/OrmOrder/${id}`, { fields: ['shout', 'discount_percent'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ shout: 'LOUDER!', discount_percent: 0 });
  });

  it('cannot be filtered on (a QuerySyntaxError naming the field)', async () => {
    await expect(t.run(() => Order().query("Q(shout='X')").ids())).rejects.toThrow(/shout/);
  });
});

describe('setter', () => {
  it('writing a computed field with a setter calls the setter, on write and on create', async () => {
    await t.run(async () => {
      const order = (await Order().create({ name: 'setter', lines: [{ amount: 200 }] })) as Rec;
      await order.write({ discount_percent: 10 });
      expect(order.discount).toBe(0.1);
      expect(order.setter_log).toBe('set 10;');
      expect(await order.discount_percent).toBe(10);
      // The setter's write recomputes what depends on it.
      expect(order.net).toBe(180);
      const created = (await Order().create({ name: 'setter on create', discount_percent: 50 })) as Rec;
      expect(created.discount).toBe(0.5);
      expect(created.setter_log).toBe('set 50;');
    });
  });

  it('the registry describes computed fields: stored or not, read-only unless they have a setter', async () => {
    const res = await t.api('GET', '/api/get_registry/OrmOrder');
    expect(res.statusCode, res.body).toBe(200);
    const reg = res.json();
    expect(reg.total).toMatchObject({ type: 'Monetary', computed: true, store: true, readonly: true });
    expect(reg.shout).toMatchObject({ type: 'Char', computed: true, store: false, readonly: true });
    expect(reg.discount_percent).toMatchObject({ computed: true, store: false });
    expect(reg.discount_percent.readonly).toBeUndefined();
  });

  it('the API ignores computed fields without a setter and calls the setter of the others', async () => {
    const created = await t.api('POST', '/api/create/OrmOrder', { name: 'api setter', total: 5, discount_percent: 20 });
    expect(created.statusCode, created.body).toBe(200);
    const res = await t.api('POST', `/api/fetch/OrmOrder/${created.json().id}`, { fields: ['total', 'discount', 'setter_log'] });
    expect(res.json()).toMatchObject({ total: 0, discount: 0.2, setter_log: 'set 20;' });
  });
});

describe('editable computed fields (editable: true)', () => {
  /** A line's note and note_length as the database holds them. */
  async function storedNote(id: number): Promise<{ note: string | null; note_length: number | null }> {
    const [row] = await rows<{ note: string | null; note_length: number | null }>(sql`SELECT note, note_length FROM orm_order_line WHERE id = ${id}`);
    return row!;
  }

  it('are computed on create when not given, and kept as given otherwise (with what depends on them)', async () => {
    await t.run(async () => {
      const order = (await Order().create({ name: 'editable' })) as Rec;
      const [computed, given] = (await Line().create_many([
        { order: order.id, name: 'bolt' },
        { order: order.id, name: 'nut', note: 'hand-typed' },
      ])) as Rec[];
      expect(await storedNote(computed!.id)).toEqual({ note: 'About bolt', note_length: 10 });
      expect(await storedNote(given!.id)).toEqual({ note: 'hand-typed', note_length: 10 });
      // Lines created through the parent's OneToMany follow the same rule.
      const nested = (await Order().create({ name: 'editable nested', lines: [{ name: 'washer' }, { name: 'pin', note: 'x' }] })) as Rec;
      const lines = (await nested.lines) as Rec[];
      expect(lines.map((l) => l.note).sort()).toEqual(['About washer', 'x']);
    });
  });

  it('keep a written value, recompute when a dependency changes later, and let a write of both keep the written value', async () => {
    await t.run(async () => {
      const order = (await Order().create({ name: 'editable write' })) as Rec;
      const line = (await Line().create({ order: order.id, name: 'gear' })) as Rec;
      await line.write({ note: 'custom note' });
      expect(await storedNote(line.id)).toEqual({ note: 'custom note', note_length: 11 });
      // The dependency changes: the computed value replaces the written one (Odoo's behaviour).
      await line.write({ name: 'cog' });
      expect(await storedNote(line.id)).toEqual({ note: 'About cog', note_length: 9 });
      // Dependency and value written together: the written value wins.
      await line.write({ name: 'sprocket', note: 'mine' });
      expect(await storedNote(line.id)).toEqual({ note: 'mine', note_length: 4 });
    });
  });

  it('are writable through the API and described as not read-only', async () => {
    const reg = (await t.api('GET', '/api/get_registry/OrmOrderLine')).json();
    expect(reg.note).toMatchObject({ computed: true, store: true });
    expect(reg.note.readonly).toBeUndefined();
    expect(reg.note_length.readonly).toBe(true);
    const order = await t.api('POST', '/api/create/OrmOrder', { name: 'editable api' });
    const created = await t.api('POST', '/api/create/OrmOrderLine', { order: order.json().id, name: 'axle', note: 'from the API' });
    expect(created.statusCode, created.body).toBe(200);
    const res = await t.api('POST', `/api/fetch/OrmOrderLine/${created.json().id}`, { fields: ['note', 'note_length'] });
    expect(res.json()).toMatchObject({ note: 'from the API', note_length: 12 });
    await t.api('PUT', `/api/update/OrmOrderLine/${created.json().id}`, { note: 'changed' });
    const after = await t.api('POST', `/api/fetch/OrmOrderLine/${created.json().id}`, { fields: ['note'] });
    expect(after.json()).toMatchObject({ note: 'changed' });
  });
});

describe('count_related', () => {
  it('counts a OneToMany and a ManyToMany for every record of the batch with one query each', async () => {
    const result = await t.run(async () => {
      const labels = await model('OrmLabel').create_many([{ name: 'count-a' }, { name: 'count-b' }]);
      const orders = await Order().create_many([
        { name: 'count 0' },
        { name: 'count 1', lines: [{ amount: 1 }], labels: [labels[0]!.id] },
        { name: 'count 3', lines: [{ amount: 1 }, { amount: 2 }, { amount: 3 }], labels: labels.map((l) => l.id) },
      ]);
      const loaded = await Order().browse(orders.map((o) => o.id));
      const database = await t.platform.database(t.name);
      const before = database.statementCount;
      const counts = await Promise.all(loaded.map(async (o) => [await o.count_related('lines'), await o.count_related('labels')]));
      return [...counts, [database.statementCount - before]];
    });
    expect(result.slice(0, 3)).toEqual([[0, 0], [1, 1], [3, 2]]);
    // Two grouped counts for three records: one per relation, not one per record.
    expect(result[3]).toEqual([2]);
  });

  it('refuses a field that is not a to-many relation', async () => {
    const err = await t.failure(async () => {
      const order = await Order().create({ name: 'count refused' });
      await order.count_related('name');
    });
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toContain("'name' is not a OneToMany or ManyToMany");
  });
});
