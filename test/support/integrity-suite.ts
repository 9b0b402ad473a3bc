/**
 * Database constraints surface as precise ValidationErrors — from model code and as 400s through
 * the API, never as 500s: `_unique_together`, the unique `identifier`, required fields, foreign
 * keys to missing records and each `on_delete` (CASCADE, SET NULL, RESTRICT). One suite, run on
 * each engine (`test/orm/constraints.test.ts` on the server, `test/pglite/constraints.test.ts` on
 * PGlite): the engines run different PostgreSQL versions, which report some violations under
 * different SQLSTATEs (RESTRICT: 23503 on 15, 23001 on 18).
 *
 * Needs the fixture modules `orm_fields` and `orm_relations` installed, and an API credential with
 * the administrator's rights on them.
 */
import type { LightMyRequestResponse } from 'fastify';
import { sql } from '../../src/db/sql-fragment.js';
import { describe, expect, it } from 'vitest';
import { NotFound, ValidationError } from '../../src/errors.js';
import { currentEnv } from '../../src/orm/env.js';
import { runSql } from '../../src/orm/execute-sql.js';
import { model, rows, type Rec } from './orm.js';

export interface IntegrityHarness {
  /** Runs model code as one unit of work (elevated). */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** The error a unit of work fails with. */
  failure(fn: () => Promise<unknown>): Promise<Error>;
  /** An authenticated JSON request to the app. */
  api(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse>;
}

export function integritySuite(harness: () => IntegrityHarness): void {
  const t = () => harness();

  describe('_unique_together', () => {
    it('creates a unique index over the fields', async () => {
      await t().run(async () => {
        const { rows: indexes } = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE tablename = 'orm_unique_pair'`.execute(currentEnv().work.trx);
        expect(indexes.some((r) => /UNIQUE INDEX .* \(code, year\)/.test(r.indexdef))).toBe(true);
      });
    });

    it('a duplicate combination is a ValidationError naming the model and the fields', async () => {
      await t().run(() => model('OrmUniquePair').create({ code: 'A', year: 2024 }));
      const err = await t().failure(() => model('OrmUniquePair').create({ code: 'A', year: 2024 }));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toBe("Unique Pair: the combination of 'code', 'year' must be unique; these values cannot be used");
    });

    it('other combinations, and combinations with an empty value, are allowed', async () => {
      await t().run(async () => {
        await model('OrmUniquePair').create_many([{ code: 'B', year: 2024 }, { code: 'B', year: 2025 }, { code: 'C', year: 2024 }]);
        await model('OrmUniquePair').create_many([{ code: 'D', year: null }, { code: 'D', year: null }]);
      });
    });

    it('a duplicate made by a write, or within one create_many, is a ValidationError too', async () => {
      let err = await t().failure(async () => {
        const rec = await model('OrmUniquePair').create({ code: 'E', year: 1 });
        await model('OrmUniquePair').create({ code: 'E', year: 2 });
        await rec.write({ year: 2 });
      });
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toContain("'code', 'year'");
      err = await t().failure(() => model('OrmUniquePair').create_many([{ code: 'F', year: 1 }, { code: 'F', year: 1 }]));
      expect(err).toBeInstanceOf(ValidationError);
    });

    it('through the API a duplicate is a 400 {error: ValidationError}, never a 500', async () => {
      const first = await t().api('POST', '/api/create/OrmUniquePair', { code: 'G', year: 7 });
      expect(first.statusCode, first.body).toBe(200);
      const second = await t().api('POST', '/api/create/OrmUniquePair', { code: 'G', year: 7 });
      expect(second.statusCode, second.body).toBe(400);
      expect(second.json()).toMatchObject({ error: 'ValidationError' });
      expect(second.json().detail).toContain("'code', 'year'");
      const other = await t().api('POST', '/api/create/OrmUniquePair', { code: 'G', year: 8 });
      const update = await t().api('PUT', `/api/update/OrmUniquePair/${other.json().id}`, { year: 7 });
      expect(update.statusCode, update.body).toBe(400);
      expect(update.json().error).toBe('ValidationError');
    });

    it('a failed create leaves nothing behind (the unit of work is rolled back)', async () => {
      await t().failure(async () => {
        await model('OrmUniquePair').create({ code: 'H', year: 1 });
        await model('OrmUniquePair').create({ code: 'H', year: 1 });
      });
      expect(await t().run(() => model('OrmUniquePair').query({ code: 'H' }).count())).toBe(0);
    });
  });

  describe('identifier', () => {
    it('is unique per model: a duplicate is a ValidationError naming identifier', async () => {
      await t().run(() => model('OrmTag').create({ name: 'x', identifier: 'orm_test.tag_x' }));
      const err = await t().failure(() => model('OrmTag').create({ name: 'y', identifier: 'orm_test.tag_x' }));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toBe("ORM Tag: 'identifier' must be unique; this value cannot be used");
    });

    it('the same identifier may be used by records of different models', async () => {
      await t().run(async () => {
        await model('OrmPartner').create({ name: 'x', identifier: 'orm_test.shared' });
        await model('OrmUniquePair').create({ code: 'I', identifier: 'orm_test.shared' });
      });
    });
  });

  describe('required (NOT NULL)', () => {
    it('through the API a missing required field is a 400 ValidationError naming it', async () => {
      const res = await t().api('POST', '/api/create/OrmAllTypes', { title: 'no name' });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ detail: "Field 'name' of All Types Record is required", error: 'ValidationError' });
    });

    it('a NULL written by raw SQL in model code (runSql) is refused by the database with the same error', async () => {
      const err = await t().failure(() => runSql(sql`INSERT INTO orm_pet (name, restrict_owner_id) VALUES (NULL, NULL)`));
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toBe("Field 'name' of Pet is required");
    });
  });

  describe('foreign keys', () => {
    it('through the API a link to a missing record is a 400 ValidationError naming the field', async () => {
      const res = await t().api('POST', '/api/create/OrmAllTypes', { name: 'fk', partner: 424_242 });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ detail: "Field 'partner': OrmPartner 424242 does not exist", error: 'ValidationError' });
    });
  });

  describe('on_delete', () => {
    it('creates each foreign key with its declared action (SET NULL when none is declared)', async () => {
      await t().run(async () => {
        const fks = await rows<{ conname: string; confdeltype: string }>(sql`
          SELECT conname, confdeltype FROM pg_constraint WHERE conrelid = 'orm_pet'::regclass AND contype = 'f'`);
        expect(Object.fromEntries(fks.map((f) => [f.conname, f.confdeltype]))).toMatchObject({
          orm_pet_cascade_owner_id_fkey: 'c',
          orm_pet_setnull_owner_id_fkey: 'n',
          orm_pet_restrict_owner_id_fkey: 'r',
          orm_pet_default_owner_id_fkey: 'n',
        });
      });
    });

    it('CASCADE deletes the referencing records', async () => {
      await t().run(async () => {
        const owner = await model('OrmOwner').create({ name: 'cascade' });
        const pets = await model('OrmPet').create_many([{ name: 'p1', cascade_owner: owner.id }, { name: 'p2', cascade_owner: owner.id }]);
        await owner.unlink();
        expect(await model('OrmPet').browse(pets.map((p) => p.id))).toEqual([]);
      });
    });

    it('SET NULL keeps the referencing records and empties their link', async () => {
      await t().run(async () => {
        const owner = await model('OrmOwner').create({ name: 'setnull' });
        const [a, b] = await model('OrmPet').create_many([{ name: 'p3', setnull_owner: owner.id }, { name: 'p4', default_owner: owner.id }]);
        await owner.unlink();
        const [a2, b2] = (await model('OrmPet').browse([a!.id, b!.id])) as Rec[];
        expect(a2!._values.setnull_owner).toBeNull();
        expect(b2!._values.default_owner).toBeNull();
      });
    });

    it('RESTRICT refuses the delete with a ValidationError naming the referencing model and field', async () => {
      let ownerId = 0;
      await t().run(async () => {
        const owner = await model('OrmOwner').create({ name: 'restrict' });
        ownerId = owner.id;
        await model('OrmPet').create({ name: 'p5', restrict_owner: owner.id });
      });
      const err = await t().failure(async () => (await model('OrmOwner').get(ownerId)).unlink());
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.message).toBe("Cannot delete or change this record: Pet records still refer to it through 'restrict_owner' (on_delete RESTRICT)");
      const viaQueryset = await t().failure(() => model('OrmOwner').query({ id: ownerId }).delete());
      expect(viaQueryset).toBeInstanceOf(ValidationError);
      await t().run(async () => expect(await model('OrmOwner').browse([ownerId])).toHaveLength(1));
    });

    it('RESTRICT through the HTTP API is a 400 ValidationError, not a 500', async () => {
      const owner = await t().api('POST', '/api/create/OrmOwner', { name: 'restrict http' });
      const pet = await t().api('POST', '/api/create/OrmPet', { name: 'p6', restrict_owner: owner.json().id });
      expect(pet.statusCode, pet.body).toBe(200);
      const res = await t().api('DELETE', `/api/delete/OrmOwner/${owner.json().id}`);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({
        detail: "Cannot delete or change this record: Pet records still refer to it through 'restrict_owner' (on_delete RESTRICT)",
        error: 'ValidationError',
      });
      const kept = await t().api('POST', `/api/fetch/OrmOwner/${owner.json().id}`, { fields: ['name'] });
      expect(kept.statusCode, kept.body).toBe(200);
    });

    it('deleting a record that no longer exists is NotFound', async () => {
      const err = await t().failure(async () => {
        const owner = await model('OrmOwner').create({ name: 'gone' });
        await owner.unlink();
        await owner.unlink();
      });
      expect(err).toBeInstanceOf(NotFound);
    });
  });
}
