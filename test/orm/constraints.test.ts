/**
 * Database constraints surface as precise ValidationErrors — from model code and as 400s through
 * the API, never as 500s: `_unique_together`, the unique `identifier`, required fields, foreign
 * keys to missing records.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { currentEnv } from '../../src/orm/env.js';
import { type TestDatabase } from '../support/test-database.js';
import { fixtureDatabase, model } from '../support/orm.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await fixtureDatabase('core', ['orm_fields']);
});
afterAll(async () => {
  await t?.close();
});

describe('_unique_together', () => {
  it('creates a unique index over the fields', async () => {
    await t.run(async () => {
      const { rows } = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE tablename = 'orm_unique_pair'`.execute(currentEnv().trx);
      expect(rows.some((r) => /UNIQUE INDEX .* \(code, year\)/.test(r.indexdef))).toBe(true);
    });
  });

  it('a duplicate combination is a ValidationError naming the model and the fields', async () => {
    await t.run(() => model('OrmUniquePair').create({ code: 'A', year: 2024 }));
    const err = await t.failure(() => model('OrmUniquePair').create({ code: 'A', year: 2024 }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain('Unique Pair');
    expect(err.message).toContain("'code'");
    expect(err.message).toContain("'year'");
  });

  it('other combinations, and combinations with an empty value, are allowed', async () => {
    await t.run(async () => {
      await model('OrmUniquePair').create_many([{ code: 'B', year: 2024 }, { code: 'B', year: 2025 }, { code: 'C', year: 2024 }]);
      await model('OrmUniquePair').create_many([{ code: 'D', year: null }, { code: 'D', year: null }]);
    });
  });

  it('a duplicate made by a write, or within one create_many, is a ValidationError too', async () => {
    let err = await t.failure(async () => {
      const rec = await model('OrmUniquePair').create({ code: 'E', year: 1 });
      await model('OrmUniquePair').create({ code: 'E', year: 2 });
      await rec.write({ year: 2 });
    });
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("'code', 'year'");
    err = await t.failure(() => model('OrmUniquePair').create_many([{ code: 'F', year: 1 }, { code: 'F', year: 1 }]));
    expect(err).toBeInstanceOf(ValidationError);
  });

  it('through the API a duplicate is a 400 {error: ValidationError}, never a 500', async () => {
    const first = await t.api('POST', '/api/create/OrmUniquePair', { code: 'G', year: 7 });
    expect(first.statusCode, first.body).toBe(200);
    const second = await t.api('POST', '/api/create/OrmUniquePair', { code: 'G', year: 7 });
    expect(second.statusCode, second.body).toBe(400);
    expect(second.json()).toMatchObject({ error: 'ValidationError' });
    expect(second.json().detail).toContain("'code', 'year'");
    const other = await t.api('POST', '/api/create/OrmUniquePair', { code: 'G', year: 8 });
    const update = await t.api('PUT', `/api/update/OrmUniquePair/${other.json().id}`, { year: 7 });
    expect(update.statusCode, update.body).toBe(400);
    expect(update.json().error).toBe('ValidationError');
  });

  it('a failed create leaves nothing behind (the unit of work is rolled back)', async () => {
    await t.failure(async () => {
      await model('OrmUniquePair').create({ code: 'H', year: 1 });
      await model('OrmUniquePair').create({ code: 'H', year: 1 });
    });
    expect(await t.run(() => model('OrmUniquePair').query({ code: 'H' }).count())).toBe(0);
  });
});

describe('identifier', () => {
  it('is unique per model: a duplicate is a ValidationError naming identifier', async () => {
    await t.run(() => model('OrmTag').create({ name: 'x', identifier: 'orm_test.tag_x' }));
    const err = await t.failure(() => model('OrmTag').create({ name: 'y', identifier: 'orm_test.tag_x' }));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain("'identifier'");
  });

  it('the same identifier may be used by records of different models', async () => {
    await t.run(async () => {
      await model('OrmPartner').create({ name: 'x', identifier: 'orm_test.shared' });
      await model('OrmUniquePair').create({ code: 'I', identifier: 'orm_test.shared' });
    });
  });
});

describe('required', () => {
  it('through the API a missing required field is a 400 ValidationError naming it', async () => {
    const res = await t.api('POST', '/api/create/OrmAllTypes', { title: 'no name' });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('ValidationError');
    expect(res.json().detail).toContain("'name'");
  });
});

describe('foreign keys', () => {
  it('through the API a link to a missing record is a 400 ValidationError naming the field', async () => {
    const res = await t.api('POST', '/api/create/OrmAllTypes', { name: 'fk', partner: 424_242 });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('ValidationError');
    expect(res.json().detail).toContain("'partner'");
  });
});
