/**
 * Imports are set-based (issue 13 item 2, CONTRACTS C3): within a batch the number of SQL
 * statements does not grow with the rows — relation cells are resolved with one query per relation
 * column for all their distinct values, records are matched with one query per key, and written
 * with multi-row INSERT / UPDATE. Counted with `t.countStatements` (every statement the database
 * runs, BEGIN, COMMIT and savepoints included) for 1, 100 and 1,000 records in one batch. The
 * counts are printed for the README.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ContactTag } from '../../modules/contacts/models/contact_tag.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import type { Model } from '../../src/orm/model.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const SIZES = [1, 100, 1000] as const;

let t: TestDatabase;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  await t.run(async () => {
    await ContactTag.create_many([{ name: 'st a' }, { name: 'st b' }, { name: 'st c' }]);
    await Contact.create({ name: 'Stmt Parent', is_company: true });
  });
  const res = await t.api('POST', '/api/bulk-create/Product', [{ name: 'Stmt Widget', list_price: 2.5 }, { name: 'Stmt Gadget', list_price: 10 }]);
  expect(res.statusCode, res.body).toBe(200);
  // The registry and the remembered key are warm before anything is counted.
  await t.api('POST', '/api/query/Contact', { limit: 1 });
}, 120_000);
afterAll(async () => { await t?.close(); });

/** Runs an import that must answer 200 with no errors; returns its statement count. */
async function counted(model: string, body: unknown): Promise<{ count: number; statements: string[]; answer: any }> {
  let answer: any;
  const { count, statements } = await t.countStatements(async () => {
    const res = await t.api('POST', `/api/import/${model}`, body);
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    answer = res.json();
  });
  expect(answer.details.errors.slice(0, 3)).toEqual([]);
  return { count, statements, answer };
}

async function flat(label: string, run: (n: number) => Promise<{ count: number; statements: string[] }>): Promise<number[]> {
  const counts: number[] = [];
  const listings: string[][] = [];
  for (const n of SIZES) {
    const { count, statements } = await run(n);
    counts.push(count);
    listings.push(statements);
  }
  if (process.env.IMPORT_SQL) console.log(listings[0]!.map((s) => s.replace(/\s+/g, ' ').slice(0, 160)).join('\n'));
  console.log(`${label}: ${counts.join(' / ')} statements for ${SIZES.join(' / ')} records`);
  expect(counts, `${label}: statements at ${SIZES.join(' / ')} records`).toEqual(SIZES.map(() => counts[0]));
  return counts;
}

const contactRows = (prefix: string, n: number) => [
  ['name', 'email', 'parent', 'tags', 'is_company'],
  ...Array.from({ length: n }, (_, i) => [`${prefix} ${i}`, `${prefix.toLowerCase().replace(/ /g, '')}${i}@stmt.test`, 'Stmt Parent', i % 2 ? 'st a, st b' : 'st c', i % 3 === 0]),
];

describe('an import costs the same number of statements for 1, 100 and 1,000 records of a batch', () => {
  it('creates contacts with a ManyToOne and a ManyToMany resolved by name', async () => {
    await flat('import Contact (create)', async (n) => {
      const res = await counted('Contact', { fields: contactRows('', 0)[0], data: contactRows(`IC${n}`, n) });
      expect(res.answer.summary).toEqual({ total_records: n, created: n, updated: 0, errors: 0 });
      return res;
    });
    const [last] = await t.run(() => Contact.query({ name: 'IC1000 999' }).read(['parent', 'tags']));
    expect((last!.tags as any[]).length).toBe(2);
    expect((last!.parent as any).display_name).toBe('Stmt Parent');
  });

  it('updates them again, matched by match_fields', async () => {
    await flat('import Contact (update by match_fields)', async (n) => {
      const rows = contactRows(`IC${n}`, n).map((r, i) => (i ? [r[0], r[1], r[2], 'st a', false] : r));
      const res = await counted('Contact', { fields: rows[0], data: rows, match_fields: ['email'] });
      expect(res.answer.summary).toEqual({ total_records: n, created: 0, updated: n, errors: 0 });
      return res;
    });
  });

  it('creates sales orders with two lines each (lines on the following rows)', async () => {
    await flat('import SaleOrder with lines', async (n) => {
      const data: unknown[][] = [['note', 'customer', 'order_lines/product', 'order_lines/quantity']];
      for (let i = 0; i < n; i++) data.push([`ISO${n} ${i}`, 'Stmt Parent', 'Stmt Widget', 1 + (i % 3)], ['', '', 'Stmt Gadget', 2]);
      const res = await counted('SaleOrder', { fields: data[0], data });
      expect(res.answer.summary.created).toBe(n);
      return res;
    });
    const [order] = await t.run(() => modelOf<typeof Model>('SaleOrder').query({ note: 'ISO1000 999' }).read(['amount_total']));
    expect(order!.amount_total).toBe(2.5 * 1 + 20);
  });

  it('a dry run of the contacts costs the same for every size too', async () => {
    await flat('import Contact (dry run)', async (n) => {
      const res = await counted('Contact', { fields: contactRows('', 0)[0], data: contactRows(`ID${n}`, n), dry_run: true });
      expect(res.answer.summary.would_create).toBe(n);
      return res;
    });
  });
});

describe('batches', () => {
  it('crosses batch boundaries (5,000 records a batch) with every record written once and progress counted', async () => {
    const n = 11_000;
    const res = await counted('Contact', { fields: contactRows('', 0)[0], data: contactRows('IB', n), progress_id: 'stmt-batches' });
    expect(res.answer.summary.created).toBe(n);
    expect(new Set(res.answer.details.creates.map((c: any) => c.id)).size).toBe(n);
    expect(res.answer.details.creates.map((c: any) => c.row)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(await t.run(() => Contact.query({ name__startswith: 'IB ' }).count())).toBe(n);
    const progress = await t.api('GET', '/api/import-progress/stmt-batches');
    expect(progress.json()).toEqual({ done: n, total: n });
  });
});
