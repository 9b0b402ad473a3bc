/**
 * A create of several records sends each column as one array through `unnest`, Binary, Json and
 * Monetary columns included (issue 25 item 2): the INSERT binds the same parameters for 3 records
 * as for 500, and every value comes back as written — bytes with any content, JSON of every shape
 * (objects, arrays, strings holding quotes, backslashes and braces, numbers, null), NULLs between
 * values.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase } from '../support/test-database.js';
import { type Rec, fixtureDatabase, model, rows } from '../support/orm.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await fixtureDatabase('core', ['orm_fields']);
});
afterAll(async () => {
  await t?.close();
});

const AllTypes = () => model('OrmAllTypes');

const PAYLOADS: unknown[] = [
  { a: [1, { b: null, c: 'ü' }], d: true }, [1, 2, [3]], 'te"x\\t {a,b}', 42.5, null, { '"k"': '\\', 'NULL': 'NULL' }, [], {},
];
const BLOBS: (Buffer | null)[] = [Buffer.from([0, 1, 2, 253, 254, 255]), null, Buffer.from('\\"{},NULL'), Buffer.from('x'.repeat(300))];

const values = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({
  name: `${prefix} ${i}`,
  blob: BLOBS[i % BLOBS.length]?.toString('base64') ?? null,
  payload: PAYLOADS[i % PAYLOADS.length],
  amount: i % 4 ? i + 0.125 : null,
  qty: i,
}));

/** The INSERT's statement and its bound parameters (its highest `$n`). */
async function insertOf(prefix: string, n: number): Promise<{ text: string; parameters: number }> {
  const { statements } = await t.countStatements(() => t.run(() => AllTypes().create_many(values(prefix, n))));
  const insert = statements.find((s) => /^\s*insert into "orm_all_types"/i.test(s))!;
  return { text: insert, parameters: Math.max(...[...insert.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]))) };
}

describe('a create of many records with Binary, Json and Monetary columns', () => {
  it('binds the same parameters for 3 records as for 500: one array per column', async () => {
    const small = await insertOf('few', 3);
    const large = await insertOf('many', 500);
    expect(large.parameters, large.text.slice(0, 400)).toBe(small.parameters);
    expect(large.text).toMatch(/unnest\(/);
    expect(large.text).not.toMatch(/\bVALUES\b/i);
  });

  it('stores every value as written', async () => {
    const given = values('back', 40);
    const made = (await t.run(() => AllTypes().create_many(given))) as Rec[];
    const read = await t.run(() => AllTypes().query({ id__in: made.map((r) => r.id) }).read(['name', 'blob', 'payload', 'amount', 'qty']));
    const byName = new Map(read.map((r) => [r.name, r]));
    given.forEach((g) => {
      const r = byName.get(g.name)!;
      expect({ blob: r.blob, payload: r.payload, amount: r.amount, qty: r.qty }, g.name)
        .toEqual({ blob: g.blob, payload: g.payload ?? null, amount: g.amount, qty: g.qty });
    });
    // The bytes themselves, not only their base64 round trip.
    const [stored] = await t.run(() => rows<{ hex: string }>(sql`SELECT encode(blob, 'hex') AS hex FROM orm_all_types WHERE id = ${made[0]!.id}`));
    expect(stored!.hex).toBe('000102fdfeff');
  });
});
