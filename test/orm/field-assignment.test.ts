/**
 * Model code assigns fields as plain properties (ARCHITECTURE §9: a setter receiving the written
 * value assigns `this.price = value / 100`, as Odoo's inverse methods do). Before, every such
 * assignment threw (the accessors had no setter) and the request answered 500.
 *
 * On a saved record the value is written — batched, before the next statement and before commit,
 * through the ordinary write path with its checks and recomputes; on a draft (`Model.new`) it only
 * sets the draft's value; an unknown name or a computed field without setter is a clear error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { ValidationError } from '../../src/errors.js';
import type { Model } from '../../src/orm/model.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODELS = `
import { Model, fields } from 'fieldforge';

export class AssignItem extends Model {
  static override _order_by = ['id ASC'];
  static override _api_methods = ['action_discount', 'action_rename', 'action_typo', 'action_assign_computed', 'action_tag', 'mark_all', 'action_bad_value'];
  static override fields = {
    name: fields.Char({ required: true }),
    price: fields.Float({ precision: 2, default: 0 }),
    quantity: fields.Integer({ default: 1 }),
    // Stored, recomputed from price and quantity: assignments must trigger it like any write.
    total: fields.Float({ precision: 2, calculate: 'calc_total', store: true, depends: ['price', 'quantity'] }),
    // Cents on the wire, written through the setter (ARCHITECTURE §9's example).
    price_cents: fields.Integer({ calculate: 'calc_price_cents', setter: 'set_price_cents' }),
    flagged: fields.Boolean({ default: false }),
    locked: fields.Boolean({ default: false }),
    parent: fields.ManyToOne('AssignItem', { related_name: 'children', on_delete: 'SET NULL' }),
    tags: fields.ManyToMany('AssignTag'),
  };
  declare name: string;
  declare price: number;
  declare quantity: number;
  declare readonly total: number;
  declare flagged: boolean;

  calc_total(): number { return (this.price ?? 0) * (this.quantity ?? 0); }
  calc_price_cents(): number { return Math.round((this.price ?? 0) * 100); }
  set_price_cents(value: number): void { this.price = value / 100; }

  /** An API method assigning, then reading back what the write recomputed. */
  action_discount(inputs: { percent: number }): { price: number; total_before_statement: number } {
    this.price = this.price * (1 - inputs.percent / 100);
    return { price: this.price, total_before_statement: this.total };
  }
  async action_rename(inputs: { name: string }): Promise<number> {
    this.name = inputs.name;
    // A query after the assignment sees it (the assignment is written before the statement).
    return (this.constructor as typeof AssignItem).query({ name: inputs.name }).count();
  }
  action_typo(): void { (this as any).prise = 1; }
  action_assign_computed(): void { (this as any).total = 5; }
  action_bad_value(): void { (this as any).quantity = 'many'; }
  async action_tag(inputs: { tags: number[] }): Promise<void> {
    (this as any).tags = inputs.tags;
    this.flagged = true;
  }
  /** A model-level method (a wizard's shape) assigning the same value on many records. */
  static async mark_all(inputs: { ids: number[] }): Promise<number> {
    const records = await this.browse(inputs.ids);
    for (const r of records) (r as AssignItem).flagged = true;
    return records.length;
  }
}

export class AssignTag extends Model {
  static override fields = { name: fields.Char({ required: true }) };
}
`;

const ACCESS = adminAccessYaml(['AssignItem', 'AssignTag']) + `
- data_type: ModelAccess
  identifier: access_item_user
  name: items user (read, write)
  model: AssignItem
  group: core.group_user
  read_perm: true
  write_perm: true
- data_type: RecordRule
  identifier: rule_item_unlocked
  name: users change unlocked items only
  model: AssignItem
  filter: Q(locked=False)
  groups: [core.group_user]
  perm_read: false
  perm_create: false
  perm_delete: false
`;

type Item = Model & { name: string; price: number; quantity: number; total: number; flagged: boolean; price_cents: number };
type ItemClass = typeof Model & { new: (vals?: Record<string, unknown>) => Item };

let t: TestDatabase;
let root: string;
let userKey: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-assign-'));
  await writeProbeModule(root, 'assign_probe', { 'models/index.ts': PROBE_MODELS, 'security/access.yaml': ACCESS });
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['assign_probe'] });
  ({ key: userKey } = await t.run(() => createServiceAccountKey({ name: 'plain user', groups: ['core.group_user'] })));
});
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const Items = () => modelOf<ItemClass>('AssignItem');

async function newItem(vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', '/api/create/AssignItem', vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

async function read(id: number, fields = ['name', 'price', 'quantity', 'total', 'flagged']): Promise<Record<string, unknown>> {
  const res = await t.api('POST', `/api/fetch/AssignItem/${id}`, { fields });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('assigning a field on a saved record', () => {
  it('a setter assigning this.price writes it and recomputes the stored total (ARCHITECTURE §9)', async () => {
    const id = await newItem({ name: 'Setter', price: 1, quantity: 3 });
    const res = await t.api('PUT', `/api/update/AssignItem/${id}`, { price_cents: 1250 });
    expect(res.statusCode, res.body).toBe(200);
    expect(await read(id)).toMatchObject({ price: 12.5, quantity: 3, total: 37.5 });
    expect((await read(id, ['price_cents'])).price_cents).toBe(1250);
  });

  it('an API method assigning a field: written, recomputed, and read back by the same record at once', async () => {
    const id = await newItem({ name: 'Discounted', price: 200, quantity: 2 });
    const res = await t.api('POST', '/api/execute/AssignItem/action_discount', { ids: [id], request_body: { inputs: { percent: 25 } } });
    expect(res.statusCode, res.body).toBe(200);
    // The record reads the assigned value at once; its total is the stored one until written.
    expect(res.json().result).toEqual({ price: 150, total_before_statement: 400 });
    expect(await read(id)).toMatchObject({ price: 150, total: 300 });
  });

  it('a statement after the assignment sees the written value (flushed before it runs)', async () => {
    const id = await newItem({ name: 'Before rename' });
    const res = await t.api('POST', '/api/execute/AssignItem/action_rename', { ids: [id], request_body: { inputs: { name: 'After rename' } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toBe(1);
    expect((await read(id)).name).toBe('After rename');
  });

  it('relations assign ids or records; the next read loads the new value', async () => {
    const [red, blue] = await t.run(async () => {
      const Tag = modelOf<typeof Model>('AssignTag');
      return (await Tag.create_many([{ name: 'red' }, { name: 'blue' }])).map((r) => r.id);
    });
    const id = await newItem({ name: 'Tagged' });
    const res = await t.api('POST', '/api/execute/AssignItem/action_tag', { ids: [id], request_body: { inputs: { tags: [red, blue] } } });
    expect(res.statusCode, res.body).toBe(200);
    const tagged = await read(id, ['tags.name', 'flagged']);
    expect((tagged.tags as { name: string }[]).map((x) => x.name).sort()).toEqual(['blue', 'red']);
    expect(tagged.flagged).toBe(true);

    const parentId = await newItem({ name: 'Parent' });
    const parentName = await t.run(async () => {
      const [child, parent] = await Items().browse([id, parentId]);
      (child as unknown as { parent: unknown }).parent = parent; // a record stands for its id
      return ((await (child as unknown as { parent: Promise<Item> }).parent) as Item).name;
    });
    expect(parentName).toBe('Parent');
    expect((await read(id, ['parent'])).parent).toMatchObject({ id: parentId, display_name: 'Parent' });
  });

  it('assigned values are written even when no statement follows (before the commit)', async () => {
    const id = await newItem({ name: 'Last thing', quantity: 2 });
    await t.run(async () => {
      const [item] = await Items().browse([id]);
      (item as Item).quantity = 7; // nothing runs after this inside the unit of work
    });
    expect(await read(id)).toMatchObject({ quantity: 7, total: 0 });
  });

  it('the same value on many records is one write: statements do not grow with the records', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) ids.push(await newItem({ name: `Bulk ${i}` }));
    const count = async (some: number[]) => (await t.countStatements(async () => {
      const res = await t.api('POST', '/api/execute/AssignItem/mark_all', { request_body: { inputs: { ids: some } } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().result).toBe(some.length);
    })).count;
    const one = await count(ids.slice(0, 1));
    const many = await count(ids.slice(1));
    expect(many).toBe(one);
    const flagged = await t.run(() => Items().query({ id__in: ids, flagged: true }).count());
    expect(flagged).toBe(40);
  });

  it('different values on many records are one write too (each record its own value and recompute)', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) ids.push(await newItem({ name: `Priced ${i}`, quantity: 2 }));
    const count = async (some: number[]) => (await t.countStatements(() => t.run(async () => {
      const records = (await Items().browse(some)) as Item[];
      records.forEach((r, i) => {
        r.price = 100 + i;
        if (i % 2) r.flagged = true; // some records are assigned a field the others are not
      });
    }))).count;
    const one = await count(ids.slice(0, 1));
    const many = await count(ids.slice(1));
    expect(many).toBe(one);
    const rows = await t.run(() => Items().query({ id__in: ids }).order_by('id ASC').read(['price', 'total', 'flagged']));
    expect(rows[0]).toMatchObject({ price: 100, total: 200, flagged: false });
    expect(rows.slice(1).map((r) => [r.price, r.total, r.flagged])).toEqual(ids.slice(1).map((_, i) => [100 + i, 2 * (100 + i), i % 2 === 1]));
  });

  it('goes through the write path\'s checks: a record rule refusing the write refuses the assignment (403), nothing written', async () => {
    const open = await newItem({ name: 'Open item', price: 10 });
    const locked = await newItem({ name: 'Locked item', price: 10, locked: true });
    const asUser = (id: number) => t.api('POST', '/api/execute/AssignItem/action_discount', { ids: [id], request_body: { inputs: { percent: 50 } } },
      { authorization: `Bearer ${userKey}` });
    expect((await asUser(open)).statusCode).toBe(200);
    expect((await read(open)).price).toBe(5);
    const refused = await asUser(locked);
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().error).toBe('AccessError');
    expect((await read(locked)).price).toBe(10);
  });

  it('a wrong value fails where it is assigned, as a write would (400 naming the field)', async () => {
    const id = await newItem({ name: 'Bad value' });
    const res = await t.api('POST', '/api/execute/AssignItem/action_bad_value', { ids: [id], request_body: {} });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'ValidationError' });
    expect(res.json().detail).toMatch(/'quantity'.*expected an integer/);
    const err = await t.failure(async () => {
      const [item] = await Items().browse([id]);
      (item as unknown as { quantity: unknown }).quantity = 'many';
    });
    expect(err).toBeInstanceOf(ValidationError);
  });
});

describe('mistakes are clear errors', () => {
  it('assigning a name that is no field throws a TypeError naming the model and the name; the API answers 500 and writes nothing', async () => {
    const id = await newItem({ name: 'Typo' });
    const err = await t.failure(async () => {
      const [item] = await Items().browse([id]);
      (item as Item).name = 'changed first';
      (item as any).prise = 3;
    });
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe("AssignItem has no field 'prise' to assign (a property of your own must start with '_')");
    expect((await read(id)).name).toBe('Typo');
    const res = await t.api('POST', '/api/execute/AssignItem/action_typo', { ids: [id], request_body: {} });
    expect(res.statusCode).toBe(500);
    expect(res.json().error).toBe('InternalError');
  });

  it('assigning a computed field without setter, or the id, throws a TypeError naming it', async () => {
    const id = await newItem({ name: 'Computed' });
    const computed = await t.failure(async () => {
      const [item] = await Items().browse([id]);
      (item as any).total = 5;
    });
    expect(computed).toBeInstanceOf(TypeError);
    expect(computed.message).toBe('Cannot assign AssignItem.total: it is computed by calc_total() and has no setter');
    const identity = await t.failure(async () => {
      const [item] = await Items().browse([id]);
      (item as any).id = 5;
    });
    expect(identity.message).toBe('Cannot assign AssignItem.id: a record keeps its id');
    const res = await t.api('POST', '/api/execute/AssignItem/action_assign_computed', { ids: [id], request_body: {} });
    expect(res.statusCode).toBe(500);
  });

  it('model code keeps properties of its own when they start with _', async () => {
    const value = await t.run(async () => {
      const [item] = await Items().browse([(await Items().query().ids())[0]!]);
      (item as any)._scratch = 42;
      return (item as any)._scratch;
    });
    expect(value).toBe(42);
  });
});

describe('drafts (Model.new)', () => {
  it('assigning on a draft sets the draft value and writes nothing; computed fields read from it', async () => {
    const before = await t.run(() => Items().query().count());
    const { total, cents, name, id, statements } = await (async () => {
      let out!: { total: number; cents: number; name: string; id: unknown };
      const counted = await t.countStatements(() => t.run(async () => {
        const draft = Items().new({ name: 'Draft', quantity: 4 });
        draft.price = 2.5;
        draft.price_cents = 300; // through its setter: price becomes 3
        out = { total: await (draft as any).calc_total(), cents: await draft.price_cents, name: draft.name, id: draft.id };
      }));
      // Only the unit of work's own statements (not opening it: the registry version).
      return { ...out, statements: counted.statements.filter((s) => !/^(begin|commit)|ff_state/i.test(s.trim())) };
    })();
    expect({ total, cents, name, id }).toEqual({ total: 12, cents: 300, name: 'Draft', id: null });
    expect(statements).toEqual([]);
    expect(await t.run(() => Items().query().count())).toBe(before);
  });

  it('a draft refuses unknown names and wrong values like a saved record', async () => {
    const err = await t.failure(async () => Items().new({ name: 'Draft', nope: 1 }));
    expect(err).toBeInstanceOf(TypeError);
    const bad = await t.failure(async () => Items().new({ name: 'Draft', quantity: 1.5 }));
    expect(bad).toBeInstanceOf(ValidationError);
  });
});
