/**
 * Relations read in the same SELECT (read-records.ts): a related record rendered as JSON by
 * PostgreSQL must be exactly what a direct read of that record gives, for every field type; a
 * subtree JSON cannot carry (Binary) falls back to one batched query, still correct.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase } from '../support/test-database.js';
import { fixtureDatabase, model } from '../support/orm.js';

/** Every stored scalar field of OrmAllTypes that JSON carries faithfully. */
const SCALARS = [
  'name', 'code', 'title', 'notes', 'flag', 'qty', 'ratio', 'raw_float', 'amount', 'currency_code',
  'day', 'moment', 'state', 'level', 'payload', 'serial', 'attachment',
];

let t: TestDatabase;
let partnerId: number;
let emptyPartnerId: number;

beforeAll(async () => {
  t = await fixtureDatabase('core', ['orm_fields']);
  await t.run(async () => {
    const Partner = model('OrmPartner');
    const AllTypes = model('OrmAllTypes');
    partnerId = (await Partner.create({ name: 'Inline partner', rank: 5 })).id;
    emptyPartnerId = (await Partner.create({ name: 'Partner without items', rank: 1 })).id;
    const tag = (await model('OrmTag').create({ name: 'inline tag' })).id;
    await AllTypes.create_many([
      {
        name: 'A full', code: 'AB', title: 'Ünïcødé "quoted" \\ back\'slash', notes: 'line 1\nline 2\t€',
        flag: true, qty: -3, ratio: 1.25, raw_float: 1e-7, amount: 0.1, currency_code: 'USD',
        day: '2024-02-29', moment: '2026-03-04T05:06:07.123Z', state: 'done', level: 'high',
        payload: { list: [1, { nested: null }], text: 'é"\\', flag: false }, blob: 'AAECAwQ=',
        partner: partnerId, tags: [tag],
      },
      { name: 'B empty', partner: partnerId, flag: false, moment: '1999-12-31T23:59:59+05:30' },
      { name: 'C big', partner: partnerId, qty: 2147483647, amount: 12345678.9, raw_float: -0.5, payload: [] },
    ]);
  });
});
afterAll(async () => {
  await t?.close();
});

/** The OrmAllTypes records of the partner read directly, as plain columns. */
function directRead(fields: string[]) {
  return t.run(() => model('OrmAllTypes').query(`Q(partner=${partnerId})`).read(fields));
}

describe('relations read in the same statement', () => {
  it('renders every scalar type of an inlined to-many exactly as a direct read does', async () => {
    const direct = await directRead(SCALARS);
    expect(direct).toHaveLength(3);
    const [partner] = await t.run(() => model('OrmPartner').query(`Q(id=${partnerId})`).read(SCALARS.map((f) => `all_types.${f}`)));
    expect(partner!.all_types).toEqual(direct);
    // The tricky values really are there (a bug that dropped them on both paths would pass the above).
    const full = direct.find((r) => r.name === 'A full')!;
    expect(full).toMatchObject({
      moment: '2026-03-04T05:06:07.123Z', amount: 0.1, raw_float: 1e-7, day: '2024-02-29', qty: -3,
      payload: { list: [1, { nested: null }], text: 'é"\\', flag: false }, title: 'Ünïcødé "quoted" \\ back\'slash',
    });
    expect(direct.find((r) => r.name === 'B empty')).toMatchObject({ moment: '1999-12-31T18:29:59.000Z', qty: null, payload: null });
  });

  it('renders an inlined ManyToOne and the relations below it, in one statement', async () => {
    const direct = await directRead(SCALARS);
    const paths = ['name', 'partner.name', 'partner.rank', 'tags.name', ...SCALARS.map((f) => `partner.all_types.${f}`)];
    const plain = await t.countStatements(() => directRead(['name']));
    let read: Record<string, any>[] = [];
    const nested = await t.countStatements(async () => {
      read = await directRead(paths);
    });
    expect(nested.count, nested.statements.join('\n')).toBe(plain.count);
    expect(read).toHaveLength(3);
    for (const rec of read) {
      expect(rec.partner).toEqual({ id: partnerId, display_name: 'Inline partner', name: 'Inline partner', rank: 5, all_types: direct });
    }
    expect(read.find((r) => r.name === 'A full')!.tags).toEqual([{ id: expect.any(Number), display_name: 'inline tag', name: 'inline tag' }]);
    expect(read.find((r) => r.name === 'B empty')!.tags).toEqual([]);
  });

  it('gives an empty list and a null link where there is nothing to inline', async () => {
    const read = await t.run(() => model('OrmPartner').query(`Q(id=${emptyPartnerId})`).read(['all_types.name']));
    expect(read).toEqual([{ id: emptyPartnerId, display_name: 'Partner without items', all_types: [] }]);
    const orphan = await t.run(async () => {
      const rec = await model('OrmAllTypes').create({ name: 'Z orphan' });
      return model('OrmAllTypes').query(`Q(id=${rec.id})`).read(['partner.name']);
    });
    expect(orphan[0]!.partner).toBeNull();
  });

  it('falls back to one batched query when a subtree holds a Binary field, with the same values', async () => {
    const direct = await directRead(['name', 'blob']);
    expect(direct.find((r) => r.name === 'A full')!.blob).toBe('AAECAwQ=');
    const inlined = await t.countStatements(() =>
      t.run(() => model('OrmPartner').query(`Q(id__in=[${partnerId}, ${emptyPartnerId}])`).read(['all_types.name'])));
    let read: Record<string, any>[] = [];
    const fallback = await t.countStatements(async () => {
      read = await t.run(() => model('OrmPartner').query(`Q(id__in=[${partnerId}, ${emptyPartnerId}])`).read(['all_types.name', 'all_types.blob']));
    });
    expect(fallback.count, fallback.statements.join('\n')).toBe(inlined.count + 1);
    expect(read.find((p) => p.id === partnerId)!.all_types).toEqual(direct);
    expect(read.find((p) => p.id === emptyPartnerId)!.all_types).toEqual([]);
  });
});
