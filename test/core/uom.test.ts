/**
 * Units of measure (spec §2.2, issue "Core primitives" item 1): the seed data, one base unit per
 * category enforced by the database (create, update, and two concurrent transactions), rounding,
 * conversions and their errors, and that the pure methods do no I/O. Decisions the spec leaves
 * open are explained in modules/core/models/uom.ts.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Model, fields } from 'fieldforge';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { ModuleError, UserError, ValidationError } from '../../src/errors.js';
import { currentEnv } from '../../src/orm/env.js';
import { Registry } from '../../src/orm/registry.js';
import { UoM, UoMCategory } from '../../modules/core/models/uom.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const BASE_INDEX = 'uom_category_id_when_is_base_uom_uniq';

let t: TestDatabase;
beforeAll(async () => {
  t = await testDatabase('core');
});
afterAll(async () => {
  await t?.close();
});

/** A fresh category (unique name) with the given units; returns the units by name. */
async function category(units: Record<string, Record<string, unknown>> = {}): Promise<{ id: number; uoms: Record<string, UoM> }> {
  return t.run(async () => {
    const categ = await UoMCategory.create({ name: `Test ${randomBytes(4).toString('hex')}` });
    const uoms: Record<string, UoM> = {};
    for (const [name, vals] of Object.entries(units)) uoms[name] = await UoM.create({ name, category: categ.id, ...vals });
    return { id: categ.id, uoms };
  });
}

const baseCount = (categoryId: number) => t.run(() => UoM.query({ category: categoryId, is_base_uom: true }).count());
const seeded = (identifier: string) => UoM.query({ identifier: `core.${identifier}` }).first() as Promise<UoM>;

describe('seed data', () => {
  it('holds the usual categories, each with exactly one base unit of factor 1', async () => {
    await t.run(async () => {
      const categories = await UoMCategory.query("Q(identifier__startswith='core.')").all();
      expect(categories.map((c) => c.name)).toEqual(expect.arrayContaining(['Unit', 'Weight', 'Length', 'Volume', 'Time', 'Surface']));
      for (const categ of categories) {
        const bases = (await categ.uoms).filter((u) => u.is_base_uom);
        expect(bases.map((u) => u.factor), categ.name).toEqual([1]);
      }
    });
  });

  it('has correct factors: 1 lb → 0.454 kg → 454 g; 1 lb → 453.592 g; a dozen, a mile, a gallon, an acre, 90 minutes', async () => {
    await t.run(async () => {
      const [lb, kg, g] = [await seeded('uom_lb'), await seeded('uom_kg'), await seeded('uom_g')];
      const inKg = await lb.convert(1, kg);
      expect(inKg).toBe(0.454);
      expect(await kg.convert(inKg, g)).toBe(454);
      expect(await lb.convert(1, g)).toBe(453.592);
      expect(await lb.convert(1, kg, false)).toBe(0.45359237);
      expect(await (await seeded('uom_dozen')).convert(2, await seeded('uom_unit'))).toBe(24);
      expect(await (await seeded('uom_mi')).convert(1, await seeded('uom_km'))).toBe(1.609);
      expect(await (await seeded('uom_in')).convert(12, await seeded('uom_ft'))).toBe(1);
      expect(await (await seeded('uom_gal_us')).convert(1, await seeded('uom_l'))).toBe(3.785);
      expect(await (await seeded('uom_acre')).convert(1, await seeded('uom_ha'))).toBe(0.405);
      expect(await (await seeded('uom_min')).convert(90, await seeded('uom_hour'))).toBe(1.5);
      expect(await (await seeded('uom_day')).convert(1, await seeded('uom_hour'))).toBe(24);
    });
  });
});

describe('one base unit per category', () => {
  it('is a partial unique index in the database', async () => {
    const rows = await t.run(async () => (await sql<{ indexdef: string }>`
      SELECT indexdef FROM pg_indexes WHERE indexname = ${BASE_INDEX}`.execute(currentEnv().work.trx)).rows);
    expect(rows[0]?.indexdef).toMatch(/CREATE UNIQUE INDEX .* \(category_id\) WHERE is_base_uom/);
  });

  it('refuses a second base unit on create (ORM), leaving nothing behind', async () => {
    const c = await category({ base: { is_base_uom: true } });
    const err = await t.failure(() => UoM.create({ name: 'second', category: c.id, is_base_uom: true }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain('only one base unit');
    expect(await baseCount(c.id)).toBe(1);
    expect(await t.run(() => UoM.query({ category: c.id }).count())).toBe(1);
  });

  it('refuses two base units in one create_many', async () => {
    const c = await category();
    const err = await t.failure(() => UoM.create_many([
      { name: 'a', category: c.id, is_base_uom: true }, { name: 'b', category: c.id, is_base_uom: true },
    ]));
    expect(err).toBeInstanceOf(ValidationError);
    expect(await baseCount(c.id)).toBe(0);
  });

  it('refuses an update making a second base unit, by the flag or by moving a base unit', async () => {
    const c = await category({ base: { is_base_uom: true }, other: { factor: 2 } });
    let err = await t.failure(async () => (await UoM.get(c.uoms.other!.id)).write({ is_base_uom: true }));
    expect(err).toBeInstanceOf(ValidationError);
    const elsewhere = await category({ base2: { is_base_uom: true } });
    err = await t.failure(async () => (await UoM.get(elsewhere.uoms.base2!.id)).write({ category: c.id }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(await baseCount(c.id)).toBe(1);
    expect(await baseCount(elsewhere.id)).toBe(1);
  });

  it('allows moving the base to another unit (unset first) and a category without a base unit yet', async () => {
    const c = await category({ first: { factor: 1 }, second: { factor: 2 } });
    expect(await baseCount(c.id)).toBe(0);
    await t.run(async () => {
      await (await UoM.get(c.uoms.first!.id)).write({ is_base_uom: true });
      await (await UoM.get(c.uoms.first!.id)).write({ is_base_uom: false });
      await (await UoM.get(c.uoms.second!.id)).write({ is_base_uom: true });
    });
    expect(await t.run(async () => (await UoM.query({ category: c.id, is_base_uom: true }).first())?.id)).toBe(c.uoms.second!.id);
  });

  it('does not apply to units without a category', async () => {
    await t.run(() => UoM.create_many([{ name: 'loose 1', is_base_uom: true }, { name: 'loose 2', is_base_uom: true }]));
  });

  it('through the API a second base unit is a 400 ValidationError, on create and on update', async () => {
    const c = await category({ base: { is_base_uom: true } });
    const create = await t.api('POST', '/api/create/UoM', { name: 'api second', category: c.id, is_base_uom: true });
    expect(create.statusCode, create.body).toBe(400);
    expect(create.json()).toMatchObject({ error: 'ValidationError' });
    expect(create.json().detail).toContain('only one base unit');
    const plain = await t.api('POST', '/api/create/UoM', { name: 'api plain', category: c.id, factor: 3 });
    expect(plain.statusCode, plain.body).toBe(200);
    const update = await t.api('PUT', `/api/update/UoM/${plain.json().id}`, { is_base_uom: true });
    expect(update.statusCode, update.body).toBe(400);
    expect(update.json().error).toBe('ValidationError');
    expect(await baseCount(c.id)).toBe(1);
  });

  /**
   * The first transaction writes a base unit and stays open until the second has reached the
   * database and waits there (a SELECT-then-INSERT check in code would let both through at this
   * point: neither sees the other's uncommitted row). Then the first commits.
   */
  async function race(act: (which: 0 | 1) => Promise<unknown>) {
    let wrote!: () => void;
    let release!: () => void;
    const firstWrote = new Promise<void>((r) => (wrote = r));
    const mayCommit = new Promise<void>((r) => (release = r));
    const first = t.run(async () => {
      await act(0);
      wrote();
      await mayCommit;
    });
    await firstWrote;
    let secondSettled = false;
    const second = t.run(() => act(1)).finally(() => (secondSettled = true));
    const deadline = Date.now() + 10_000;
    while (!secondSettled && Date.now() < deadline) {
      const waiting = await t.run(async () => (await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${t.name} AND wait_event_type = 'Lock'`.execute(currentEnv().work.trx)).rows[0]!.n);
      if (waiting > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(secondSettled, 'the second transaction should wait for the first').toBe(false);
    release();
    return Promise.allSettled([first, second]);
  }

  it('two concurrent creates leave exactly one base unit; the other fails with ValidationError', async () => {
    const c = await category();
    const [first, second] = await race((which) => UoM.create({ name: `racer ${which}`, category: c.id, is_base_uom: true }));
    expect(first.status).toBe('fulfilled');
    expect(second.status).toBe('rejected');
    expect((second as PromiseRejectedResult).reason).toBeInstanceOf(ValidationError);
    expect(await baseCount(c.id)).toBe(1);
  });

  it('two concurrent updates leave exactly one base unit; the other fails with ValidationError', async () => {
    const c = await category({ u0: { factor: 1 }, u1: { factor: 2 } });
    const [first, second] = await race(async (which) => (await UoM.get(c.uoms[`u${which}`]!.id)).write({ is_base_uom: true }));
    expect(first.status).toBe('fulfilled');
    expect((second as PromiseRejectedResult).reason).toBeInstanceOf(ValidationError);
    expect(await baseCount(c.id)).toBe(1);
  });
});

describe('round_qty (half-up, away from zero)', () => {
  it('rounds to the unit rounding, without binary noise', async () => {
    const { uoms: { cent, half, five } } = await category({ cent: { rounding: 0.01 }, half: { rounding: 0.5 }, five: { rounding: 5 } });
    expect(cent!.round_qty(1.234)).toBe(1.23);
    expect(cent!.round_qty(1.235)).toBe(1.24);
    expect(cent!.round_qty(0.1 + 0.2)).toBe(0.3);
    expect(cent!.round_qty(1.005)).toBe(1.01); // 1.005 is 1.00499999… in binary; people mean 1.005
    expect(cent!.round_qty(0.285)).toBe(0.29);
    expect(cent!.round_qty(2)).toBe(2);
    expect(half!.round_qty(1.3)).toBe(1.5);
    expect(half!.round_qty(1.2)).toBe(1);
    expect(five!.round_qty(12.5)).toBe(15);
    expect(five!.round_qty(12.4)).toBe(10);
  });

  it('is half-up, not banker’s, and symmetric for negative quantities', async () => {
    const { uoms: { whole, cent } } = await category({ whole: { rounding: 1 }, cent: { rounding: 0.01 } });
    expect(whole!.round_qty(0.5)).toBe(1);
    expect(whole!.round_qty(2.5)).toBe(3);
    expect(whole!.round_qty(-2.5)).toBe(-3);
    expect(cent!.round_qty(-1.235)).toBe(-1.24);
    expect(cent!.round_qty(-1.234)).toBe(-1.23);
    expect(Object.is(cent!.round_qty(-0.004), 0)).toBe(true); // never -0
  });

  it('returns the quantity unchanged when rounding is 0 or unset', async () => {
    const { uoms: { zero, unset } } = await category({ zero: { rounding: 0 }, unset: { rounding: null } });
    expect(zero!.rounding).toBe(0);
    expect(unset!.rounding).toBeNull();
    expect(zero!.round_qty(1.23456789)).toBe(1.23456789);
    expect(unset!.round_qty(-1.23456789)).toBe(-1.23456789);
  });

  it('defaults: factor 1, rounding 0.001, not a base unit', async () => {
    const { uoms: { plain } } = await category({ plain: {} });
    expect([plain!.factor, plain!.rounding, plain!.is_base_uom]).toEqual([1, 0.001, false]);
    expect(plain!.round_qty(1.23456)).toBe(1.235);
  });
});

describe('convert_to_base / convert_from_base', () => {
  it('multiply / divide by the factor, rounded with the unit rounding unless round_result is false', async () => {
    const { uoms: { lb, g } } = await category({ lb: { factor: 0.45359237 }, g: { factor: 0.001, rounding: 1 } });
    expect(lb!.convert_to_base(2)).toBe(0.907);
    expect(lb!.convert_to_base(2, false)).toBe(0.90718474);
    expect(lb!.convert_from_base(1)).toBe(2.205);
    expect(lb!.convert_from_base(1, false)).toBeCloseTo(2.2046226218, 9);
    expect(g!.convert_from_base(1.2345)).toBe(1235);
    expect(g!.convert_to_base(1500)).toBe(2); // 1.5 at this unit's rounding 1
  });

  it('a zero factor: convert_from_base and convert (either side) raise UserError; convert_to_base returns qty * 0', async () => {
    const { uoms: { broken, base } } = await category({ broken: { factor: 0 }, base: { is_base_uom: true } });
    expect(() => broken!.convert_from_base(1)).toThrow(UserError);
    expect(() => broken!.convert_from_base(1, false)).toThrow(/factor of 0/);
    expect(broken!.convert_to_base(5)).toBe(0); // spec §2.2 rule 3: qty * factor
    await expect(t.run(() => base!.convert(1, broken!))).rejects.toBeInstanceOf(UserError);
    await expect(t.run(() => broken!.convert(1, base!))).rejects.toBeInstanceOf(UserError);
  });
});

describe('convert', () => {
  it('routes through the base and rounds with the target unit rounding', async () => {
    const { uoms: { kg, lb, g5 } } = await category({
      kg: { is_base_uom: true, rounding: 0.001 }, lb: { factor: 0.45359237, rounding: 1 }, g5: { factor: 0.001, rounding: 5 },
    });
    await t.run(async () => {
      expect(await lb!.convert(1, g5!)).toBe(455); // 453.59237 to a multiple of 5
      expect(await lb!.convert(1, kg!)).toBe(0.454); // not 0, as lb's rounding 1 would give
      expect(await g5!.convert(455, lb!)).toBe(1);
      expect(await lb!.convert(1, g5!, false)).toBeCloseTo(453.59237, 9);
      expect(await lb!.convert(1.23456, lb!)).toBe(1);
      expect(await lb!.convert(1.23456, lb!, false)).toBe(1.23456);
      expect(await lb!.convert(1, kg!.id)).toBe(0.454); // an id works too
    });
  });

  it('across categories, or from a unit with a category to one without, is a UserError', async () => {
    const a = await category({ x: {} });
    const b = await category({ y: {} });
    const loose = await t.run(() => UoM.create({ name: 'loose convert' }));
    const err = await t.failure(() => a.uoms.x!.convert(1, b.uoms.y!));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toContain('different categories');
    expect(await t.failure(() => a.uoms.x!.convert(1, loose))).toBeInstanceOf(UserError);
    expect(await t.failure(() => loose.convert(1, a.uoms.x!))).toBeInstanceOf(UserError);
  });

  it('works between units that both have no category', async () => {
    const [one, two] = await t.run(() => UoM.create_many([{ name: 'nocat 1' }, { name: 'nocat 2', factor: 4 }]));
    expect(await t.run(() => two!.convert(1, one!))).toBe(4);
  });
});

describe('is_compatible', () => {
  it('is true within a category or when both have none, false otherwise', async () => {
    const a = await category({ x: {}, z: { factor: 3 } });
    const b = await category({ y: {} });
    const [n1, n2] = await t.run(() => UoM.create_many([{ name: 'compat 1' }, { name: 'compat 2' }]));
    await t.run(async () => {
      expect(await a.uoms.x!.is_compatible(a.uoms.z!)).toBe(true);
      expect(await a.uoms.x!.is_compatible(a.uoms.z!.id)).toBe(true);
      expect(await a.uoms.x!.is_compatible(b.uoms.y!)).toBe(false);
      expect(await n1!.is_compatible(n2!)).toBe(true);
      expect(await n1!.is_compatible(a.uoms.x!)).toBe(false);
      expect(await a.uoms.x!.is_compatible(n1!)).toBe(false);
    });
  });
});

describe('no I/O', () => {
  it('round_qty, convert_to_base and convert_from_base are synchronous and run no statement; convert of loaded units neither', async () => {
    await t.run(async () => {
      const [lb, kg] = [await seeded('uom_lb'), await seeded('uom_kg')];
      let results: unknown[] = [];
      const { count } = await t.countStatements(async () => {
        results = [lb.round_qty(1.23456), lb.convert_to_base(1), lb.convert_from_base(1), kg.convert_to_base(2, false)];
        results.push(await lb.convert(1, kg), await lb.is_compatible(kg));
      });
      expect(count).toBe(0);
      expect(results).toEqual([1.235, 0.454, 2.205, 2, 0.454, true]);
    });
  });
});

describe('UoMCategory and the registry', () => {
  it('describes the fields as §2.2 declares them', async () => {
    const res = await t.api('GET', '/api/get_registry/UoM');
    expect(res.statusCode, res.body).toBe(200);
    const reg = res.json();
    expect(reg.name).toMatchObject({ type: 'Char', required: true, max_length: 50 });
    expect(reg.category).toMatchObject({ type: 'ManyToOne', related_model: 'UoMCategory' });
    expect(reg.factor).toMatchObject({ type: 'Float', default: 1 });
    expect(reg.rounding).toMatchObject({ type: 'Float', precision: 6, default: 0.001 });
    expect(reg.is_base_uom).toMatchObject({ type: 'Boolean', default: false });
    const categ = (await t.api('GET', '/api/get_registry/UoMCategory')).json();
    expect(categ.name).toMatchObject({ type: 'Char', required: true });
    expect(categ.uoms).toMatchObject({ type: 'OneToMany', related_model: 'UoM' });
  });

  it('deleting a category keeps its units, without a category (on_delete SET NULL)', async () => {
    const c = await category({ kept: { is_base_uom: true } });
    await t.run(async () => (await UoMCategory.get(c.id)).unlink());
    const kept = await t.run(() => UoM.get(c.uoms.kept!.id));
    expect(kept._values.category).toBeNull();
  });

  it('an ordinary user reads units but cannot create them', async () => {
    const { key } = await t.run(() => createServiceAccountKey({ name: 'uom reader', groups: ['core.group_user'] }));
    const auth = { authorization: `Bearer ${key}` };
    const read = await t.api('POST', '/api/query/UoM', { fields: ['name'], filter_str: "Q(identifier='core.uom_kg')" }, auth);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual([expect.objectContaining({ name: 'kg' })]);
    const create = await t.api('POST', '/api/create/UoM', { name: 'sneaky' }, auth);
    expect(create.statusCode, create.body).toBe(403);
    expect((await t.api('POST', '/api/create/UoMCategory', { name: 'sneaky' }, auth)).statusCode).toBe(403);
  });
});

describe('the _unique_when declaration', () => {
  const build = (cls: typeof Model) => () => Registry.build([{ id: 'probe', declarations: [cls], extensions: [] }]);

  it('must name stored fields and a stored Boolean `when`', () => {
    class WhenNotBoolean extends Model {
      static override _unique_when = [{ fields: ['code'], when: 'code' }];
      static override fields = { code: fields.Char() };
    }
    class UnknownField extends Model {
      static override _unique_when = [{ fields: ['nope'], when: 'flag' }];
      static override fields = { flag: fields.Boolean() };
    }
    class NoFields extends Model {
      static override _unique_when = [{ fields: [], when: 'flag' }];
      static override fields = { flag: fields.Boolean() };
    }
    class Fine extends Model {
      static override _unique_when = [{ fields: ['code'], when: 'flag' }];
      static override fields = { code: fields.Char(), flag: fields.Boolean() };
    }
    expect(build(WhenNotBoolean)).toThrow(ModuleError);
    expect(build(WhenNotBoolean)).toThrow(/stored Boolean/);
    expect(build(UnknownField)).toThrow(/'nope', which is not a stored field/);
    expect(build(NoFields)).toThrow(/non-empty 'fields'/);
    const registry = build(Fine)();
    expect(registry.constraints.get('fine_code_when_flag_uniq')).toMatchObject({ model: 'Fine', fields: ['code', 'flag'], kind: 'unique' });
  });

  it('an upgrade re-creates a missing index, or warns and waits while the data breaks the rule', async () => {
    const c = await category({ b1: { is_base_uom: true }, b2: {} });
    const indexExists = () => t.run(async () => (await sql`SELECT 1 FROM pg_indexes WHERE indexname = ${BASE_INDEX}`.execute(currentEnv().work.trx)).rows.length === 1);
    await t.run(async () => {
      await sql`DROP INDEX ${sql.id(BASE_INDEX)}`.execute(currentEnv().work.trx);
      await sql`UPDATE uom SET is_base_uom = true WHERE id = ${c.uoms.b2!.id}`.execute(currentEnv().work.trx);
    });
    let result = await t.platform.install(t.name, { update: ['core'] });
    expect(result.warnings.join('\n')).toMatch(/UoM: existing rows hold more than one 'is_base_uom' record per 'category'/);
    expect(await indexExists()).toBe(false);

    await t.run(async () => (await UoM.get(c.uoms.b2!.id)).write({ is_base_uom: false }));
    result = await t.platform.install(t.name, { update: ['core'] });
    expect(result.warnings.join('\n')).not.toMatch(/is_base_uom/);
    expect(await indexExists()).toBe(true);
    // Idempotent: a further upgrade keeps it and keeps enforcing it.
    await t.platform.install(t.name, { update: ['core'] });
    expect(await t.failure(async () => (await UoM.get(c.uoms.b2!.id)).write({ is_base_uom: true }))).toBeInstanceOf(ValidationError);
  });
});
