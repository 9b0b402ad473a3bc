/**
 * Export → import reproduces the records (CONTRACTS C3, issue 13 item 1): documents of a model
 * with every exportable field type, OneToMany lines and ManyToMany tags are exported
 * import-compatible from one database, the XLSX read back by an independent reader (exceljs's,
 * dates handed over as spreadsheet serials, as a spreadsheet holds them), imported through
 * `POST /api/import` into a second, empty database, and read from both: the same values, links,
 * tags and lines. The tags travel first, the same way (a document names them by identifier, or by
 * name when they have none).
 */
import { rm, mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelOf } from '../../src/orm/model-lookup.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const ExcelJS = createRequire(import.meta.url)('exceljs') as typeof import('exceljs');

const MODELS = `
import { Model, fields } from 'fieldforge';

export class RoundTag extends Model {
  static override _verbose_name = 'Round tag';
  static override fields = { name: fields.Char({ required: true }) };
}

export class RoundDoc extends Model {
  static override _verbose_name = 'Round document';
  static override fields = {
    name: fields.Char({ required: true }),
    notes: fields.Text(),
    quantity: fields.Integer(),
    ratio: fields.Float(),
    currency: fields.ManyToOne('Currency', { on_delete: 'RESTRICT' }),
    amount: fields.Monetary({ currency_field: 'currency' }),
    due: fields.Date(),
    stamp: fields.Datetime(),
    done: fields.Boolean(),
    state: fields.Selection({ choices: [['draft', 'Draft'], ['sent', 'Sent out']] }),
    main_tag: fields.ManyToOne('RoundTag', { on_delete: 'SET NULL' }),
    tags: fields.ManyToMany('RoundTag', { related_name: 'docs' }),
    lines: fields.OneToMany('RoundLine', 'doc'),
  };
}

export class RoundLine extends Model {
  static override _verbose_name = 'Round line';
  static override _order_by = ['sequence ASC', 'id ASC'];
  static override fields = {
    doc: fields.ManyToOne('RoundDoc', { required: true, on_delete: 'CASCADE' }),
    sequence: fields.Integer({ default: 10 }),
    label: fields.Char({ required: true }),
    qty: fields.Float(),
    tag: fields.ManyToOne('RoundTag', { on_delete: 'SET NULL' }),
  };
}
`;

const DOC_FIELDS = ['name', 'notes', 'quantity', 'ratio', 'currency', 'amount', 'due', 'stamp', 'done', 'state', 'main_tag', 'tags',
  'lines/sequence', 'lines/label', 'lines/qty', 'lines/tag', 'identifier'];
const READ_BACK = ['name', 'notes', 'quantity', 'ratio', 'currency.name', 'amount', 'due', 'stamp', 'done', 'state', 'main_tag.name',
  'tags.name', 'lines.sequence', 'lines.label', 'lines.qty', 'lines.tag.name', 'identifier'];
const SERIAL_EPOCH = Date.UTC(1899, 11, 30);

let source: TestDatabase;
let target: TestDatabase;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-roundtrip-'));
  await writeProbeModule(root, 'roundtrip_probe', {
    'models/index.ts': MODELS,
    'security/access.yaml': adminAccessYaml(['RoundDoc', 'RoundLine', 'RoundTag']),
  });
  [source, target] = await Promise.all([testDatabase('core', [root]), testDatabase('core', [root])]);
  await Promise.all([source, target].map((db) => db.platform.install(db.name, { init: ['roundtrip_probe'] })));
  await source.run(async () => {
    const Tag = modelOf('RoundTag');
    const usd = (await modelOf('Currency').query({ name: 'USD' }).with_archived().first())!.id;
    const kwd = (await modelOf('Currency').query({ name: 'KWD' }).with_archived().first())!.id;
    const urgent = (await Tag.create({ name: 'urgent', identifier: 'roundtrip_probe.tag_urgent' })).id;
    const later = (await Tag.create({ name: 'later' })).id;
    const Doc = modelOf('RoundDoc');
    await Doc.create({
      name: 'Full', notes: 'two\nlines, "quoted" & <b>', quantity: 42, ratio: 0.125, currency: kwd, amount: 1234.567, due: '2026-02-28',
      stamp: '2026-02-28T23:59:58Z', done: true, state: 'sent', main_tag: urgent, tags: [urgent, later],
      lines: [{ sequence: 1, label: 'one', qty: 1.5, tag: later }, { sequence: 2, label: 'two', qty: 0 }, { sequence: 3, label: 'three', qty: -2, tag: urgent }],
    });
    await Doc.create({ name: 'Sparse', done: false, currency: usd, amount: 0, identifier: 'roundtrip_probe.doc_sparse' });
    await Doc.create({ name: 'One line', done: false, state: 'draft', due: '1999-12-31', tags: [later], lines: [{ sequence: 5, label: 'alone' }] });
  });
});
afterAll(async () => {
  await source?.close();
  await target?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** An import-compatible export of `model` as import `data`: exceljs's values, dates as serials, blanks as null. */
async function exportedRows(model: string, fields: string[]): Promise<(string | number | boolean | null)[][]> {
  const res = await source.api('POST', `/api/export/${model}`, { fields, import_compatible: true });
  expect(res.statusCode, res.body).toBe(200);
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(res.rawPayload as never);
  const sheet = workbook.worksheets[0]!;
  const rows: (string | number | boolean | null)[][] = [];
  sheet.eachRow({ includeEmpty: true }, (row, n) => {
    const values = row.values as unknown[];
    rows[n - 1] = fields.map((_f, i) => {
      const v = values[i + 1];
      if (v instanceof Date) return (v.getTime() - SERIAL_EPOCH) / 86_400_000;
      return (v ?? null) as string | number | boolean | null;
    });
  });
  return rows;
}

async function imported(model: string, rows: unknown[][]) {
  const res = await target.api('POST', `/api/import/${model}`, { fields: rows[0], data: rows, atomic: true });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().details.errors).toEqual([]);
  return res.json();
}

async function records(db: TestDatabase, model: string, fields: string[]) {
  const res = await db.api('POST', `/api/query/${model}`, { fields, order_by: ['name ASC'], limit: 100 });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as Record<string, unknown>[]).map(withoutIds);
}

/** Record values without database ids, which differ between the databases by design. */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'id').map(([k, v]) => [k, withoutIds(v)]));
  }
  return value;
}

describe('export → import', () => {
  it('reproduces tags, then documents with every field type, their tags and their lines, in an empty database', async () => {
    const tags = await exportedRows('RoundTag', ['name', 'identifier']);
    expect(tags[0]).toEqual(['name', 'identifier']);
    expect((await imported('RoundTag', tags)).summary).toMatchObject({ created: 2, errors: 0 });

    const docs = await exportedRows('RoundDoc', DOC_FIELDS);
    // The layout import reads: the lines of `Full` on the rows after it, first cell blank.
    expect(docs.map((r) => r[0])).toEqual(['name', 'Full', null, null, 'Sparse', 'One line']);
    const answer = await imported('RoundDoc', docs);
    expect(answer.summary).toMatchObject({ total_records: 3, created: 3, errors: 0 });

    const [before, after] = await Promise.all([records(source, 'RoundDoc', READ_BACK), records(target, 'RoundDoc', READ_BACK)]);
    expect(after).toEqual(before);
    // Not vacuous: the source holds what the comparison is about.
    expect(before.find((r: any) => r.name === 'Full')).toMatchObject({
      quantity: 42, ratio: 0.125, amount: 1234.567, due: '2026-02-28', stamp: '2026-02-28T23:59:58.000Z', done: true, state: 'sent',
      currency: { name: 'KWD' }, main_tag: { name: 'urgent' }, tags: [{ name: 'urgent' }, { name: 'later' }],
    });
    expect((before.find((r: any) => r.name === 'Full') as any).lines.map((l: any) => l.label)).toEqual(['one', 'two', 'three']);
  });
});
