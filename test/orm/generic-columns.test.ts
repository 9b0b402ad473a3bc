/**
 * The columns every model has: id, identifier, the audit columns filled by the platform, and the
 * computed display_name; plus the model-level declarations _verbose_name and _order_by.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentEnv } from '../../src/orm/env.js';
import { type TestDatabase } from '../support/test-database.js';
import { type Rec, fixtureDatabase, model } from '../support/orm.js';

let t: TestDatabase;
let aliceId = 0;
let bobId = 0;
beforeAll(async () => {
  t = await fixtureDatabase('core', ['orm_fields']);
  [aliceId, bobId] = await t.run(async () => {
    const users = await model('User').create_many([{ name: 'Alice', email: 'alice@example.org' }, { name: 'Bob', email: 'bob@example.org' }]);
    return users.map((u) => u.id);
  });
});
afterAll(async () => {
  await t?.close();
});

describe('id', () => {
  it('is assigned by the database, increasing, and cannot be set', async () => {
    await t.run(async () => {
      const [a, b] = await model('OrmTag').create_many([{ name: 'id-a', id: 999_999 }, { name: 'id-b' }]);
      expect(Number.isInteger(a!.id)).toBe(true);
      expect(b!.id).toBeGreaterThan(a!.id);
      expect(a!.id).not.toBe(999_999);
      expect(currentEnv().registry.meta('OrmTag').fields.get('id')!.describe()).toEqual({ type: 'Integer', label: 'ID', readonly: true });
    });
  });
});

describe('identifier', () => {
  it('is honoured on create, from model code and through the API', async () => {
    await t.run(async () => {
      const tag = (await model('OrmTag').create({ name: 'ident', identifier: 'orm_test.ident' })) as Rec;
      expect(tag.identifier).toBe('orm_test.ident');
      expect(await model('OrmTag').query({ identifier: 'orm_test.ident' }).ids()).toEqual([tag.id]);
    });
    const res = await t.api('POST', '/api/create/OrmTag', { name: 'api ident', identifier: 'orm_test.api_ident' });
    expect(res.statusCode, res.body).toBe(200);
    const fetched = await t.api('POST', `/api/fetch/OrmTag/${res.json().id}`, { fields: ['identifier'] });
    expect(fetched.json().identifier).toBe('orm_test.api_ident');
  });

  it('is not changed by an API update', async () => {
    const res = await t.api('POST', '/api/create/OrmTag', { name: 'keep ident', identifier: 'orm_test.keep' });
    const id = res.json().id;
    const upd = await t.api('PUT', `/api/update/OrmTag/${id}`, { name: 'renamed', identifier: 'orm_test.changed' });
    expect(upd.statusCode, upd.body).toBe(200);
    const fetched = await t.api('POST', `/api/fetch/OrmTag/${id}`, { fields: ['name', 'identifier'] });
    expect(fetched.json()).toMatchObject({ name: 'renamed', identifier: 'orm_test.keep' });
  });
});

describe('audit columns', () => {
  it('created_by and updated_by are the env uid; created_date and updated_date are set by the platform', async () => {
    const before = Date.now();
    const id = await t.run(async () => (await model('OrmTag').create({ name: 'audited' })).id, { uid: aliceId });
    const rec = (await t.run(() => model('OrmTag').get(id))) as Rec;
    expect(rec._values.created_by).toBe(aliceId);
    expect(rec._values.updated_by).toBe(aliceId);
    expect(((await t.run(async () => ((await model('OrmTag').get(id)) as Rec).created_by)) as Rec).name).toBe('Alice');
    const created = Date.parse(rec.created_date as string);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(created).toBeLessThanOrEqual(Date.now() + 1000);
    expect(rec.updated_date).toBe(rec.created_date);
  });

  it('a write by another user changes updated_by and updated_date, never created_by or created_date', async () => {
    const id = await t.run(async () => (await model('OrmTag').create({ name: 'edited' })).id, { uid: aliceId });
    const first = (await t.run(() => model('OrmTag').get(id))) as Rec;
    await new Promise((r) => setTimeout(r, 10));
    await t.run(async () => {
      await (await model('OrmTag').get(id)).write({ name: 'edited by bob', created_by: bobId, created_date: '2000-01-01T00:00:00Z' });
    }, { uid: bobId });
    const after = (await t.run(() => model('OrmTag').get(id))) as Rec;
    expect(after._values.created_by).toBe(aliceId);
    expect(after.created_date).toBe(first.created_date);
    expect(after._values.updated_by).toBe(bobId);
    expect(Date.parse(after.updated_date as string)).toBeGreaterThan(Date.parse(first.updated_date as string));
  });

  it('run as the platform (no uid), created_by is empty', async () => {
    await t.run(async () => {
      const rec = await model('OrmTag').create({ name: 'by platform' });
      expect(rec._values.created_by).toBeNull();
      expect(rec._values.updated_by).toBeNull();
    });
  });

  it('created_by cannot be forged on create; created_date may be given (imports)', async () => {
    await t.run(async () => {
      const rec = (await model('OrmTag').create({ name: 'forged', created_by: bobId, created_date: '2001-02-03T04:05:06Z' })) as Rec;
      expect(rec._values.created_by).toBe(aliceId);
      expect(rec.created_date).toBe('2001-02-03T04:05:06.000Z');
    }, { uid: aliceId });
  });

  it('through the API, created_by is the credential’s user', async () => {
    const res = await t.api('POST', '/api/create/OrmTag', { name: 'via api', created_by: aliceId });
    const fetched = await t.api('POST', `/api/fetch/OrmTag/${res.json().id}`, { fields: ['created_by', 'updated_by', 'created_date'] });
    expect(fetched.statusCode, fetched.body).toBe(200);
    const body = fetched.json();
    expect(body.created_by).not.toBeNull();
    expect(body.created_by.id).not.toBe(aliceId);
    expect(body.updated_by.id).toBe(body.created_by.id);
    expect(body.created_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});

describe('display_name', () => {
  it('is the name field by default', async () => {
    await t.run(async () => {
      const rec = await model('OrmTag').create({ name: 'Shown' });
      expect(rec.display_name).toBe('Shown');
      expect(rec.toJSON()).toEqual({ id: rec.id, display_name: 'Shown' });
    });
  });

  it('follows _rec_name when the model names another field', async () => {
    await t.run(async () => {
      const rec = await model('OrmTitled').create({ name: 'the name', title: 'The Title' });
      expect(rec.display_name).toBe('The Title');
      const [read] = await model('OrmTitled').query({ id: rec.id }).read(['name']);
      expect(read).toEqual({ id: rec.id, display_name: 'The Title', name: 'the name' });
      expect(await model('OrmTitled').query("Q(display_name='The Title')").ids()).toEqual([rec.id]);
    });
  });

  it('falls back to "<Verbose name> #<id>" without a name (declared or derived verbose name)', async () => {
    await t.run(async () => {
      const nameless = await model('OrmNameless').create({ label: 'not a name' });
      expect(nameless.display_name).toBe(`Nameless Thing #${nameless.id}`);
      const untitled = await model('OrmTitled').create({ name: 'has a name but no title' });
      expect(untitled.display_name).toBe(`Orm Titled #${untitled.id}`);
      const [read] = await model('OrmNameless').query({ id: nameless.id }).read(['label']);
      expect(read!.display_name).toBe(`Nameless Thing #${nameless.id}`);
    });
  });

  it('is what a ManyToOne reads as, and what the API returns for writes', async () => {
    const partner = await t.api('POST', '/api/create/OrmPartner', { name: 'DN partner' });
    expect(partner.json()).toMatchObject({ name: 'DN partner', display_name: 'DN partner' });
    const nameless = await t.api('POST', '/api/create/OrmNameless', { label: 'x' });
    expect(nameless.json().display_name).toBe(`Nameless Thing #${nameless.json().id}`);
    const rec = await t.api('POST', '/api/create/OrmAllTypes', { name: 'dn', partner: partner.json().id });
    const fetched = await t.api('POST', `/api/fetch/OrmAllTypes/${rec.json().id}`, { fields: ['partner'] });
    expect(fetched.json().partner).toEqual({ id: partner.json().id, display_name: 'DN partner' });
  });
});

describe('model declarations', () => {
  it('_verbose_name is used by the registry; without it the class name is spaced out', async () => {
    await t.run(async () => {
      expect(currentEnv().registry.meta('OrmUniquePair').verboseName).toBe('Unique Pair');
      expect(currentEnv().registry.meta('OrmTitled').verboseName).toBe('Orm Titled');
      expect(currentEnv().registry.meta('OrmUniquePair').table).toBe('orm_unique_pair');
    });
  });

  it('_order_by is the default ordering of queries and of to-many reads', async () => {
    await t.run(async () => {
      // OrmPartner._order_by = ['rank DESC', 'id ASC'].
      const [low, high, mid] = await model('OrmPartner').create_many([
        { name: 'ord low', rank: 1 }, { name: 'ord high', rank: 9 }, { name: 'ord mid', rank: 5 },
      ]);
      expect(await model('OrmPartner').query("Q(name__startswith='ord ')").ids()).toEqual([high!.id, mid!.id, low!.id]);
      // Without _order_by: id ASC.
      const [n1, n2] = await model('OrmNameless').create_many([{ label: 'z' }, { label: 'a' }]);
      expect(await model('OrmNameless').query(`Q(id__in=[${n2!.id}, ${n1!.id}])`).ids()).toEqual([n1!.id, n2!.id]);
      // OrmTag._order_by = ['name ASC'] also orders ManyToMany reads.
      const tags = await model('OrmTag').create_many([{ name: 'ord-c' }, { name: 'ord-a' }, { name: 'ord-b' }]);
      const rec = (await model('OrmAllTypes').create({ name: 'ordered tags', tags: tags.map((x) => x.id) })) as Rec;
      expect(((await rec.tags) as Rec[]).map((x) => x.name)).toEqual(['ord-a', 'ord-b', 'ord-c']);
    });
  });
});
