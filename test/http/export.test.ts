/**
 * Spreadsheet export (`POST /api/export/{model}`, spec §4.7, CONTRACTS C3) on real PostgreSQL:
 * the three row rules (ids in the order sent; a filter minus `exclude_ids`; neither → every
 * visible record), paths through relations, typed cells read back by an independent reader
 * (exceljs's, not the writer that made the file; and LibreOffice when installed), labels in the
 * caller's language, the import-compatible layout with lines on following rows, access rules on
 * every row and related value, 404/400 refusals as JSON, the content type and file name, and
 * reads in pages whose statement count does not grow with the rows.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Company } from '../../modules/core/models/company.js';
import { Language } from '../../modules/core/models/language.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

// exceljs ships CommonJS only.
const ExcelJS = createRequire(import.meta.url)('exceljs') as typeof import('exceljs');
const run = promisify(execFile);

const MODELS = `
import { Model, fields } from 'fieldforge';

export class ExportTag extends Model {
  static override _verbose_name = 'Export tag';
  static override fields = { name: fields.Char({ required: true }) };
}

export class ExportDoc extends Model {
  static override _verbose_name = 'Export document';
  static override _order_by = ['name ASC', 'id ASC'];
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
    state: fields.Selection({ choices: [['draft', 'Draft'], ['sent', 'Sent out']], default: 'draft' }),
    contact: fields.ManyToOne('Contact', { on_delete: 'SET NULL' }),
    main_tag: fields.ManyToOne('ExportTag', { label: 'Main tag', on_delete: 'SET NULL' }),
    tags: fields.ManyToMany('ExportTag', { related_name: 'docs' }),
    lines: fields.OneToMany('ExportLine', 'doc', { label: 'Lines' }),
    secret: fields.Binary(),
    active: fields.Boolean({ default: true }),
  };
}

export class ExportLine extends Model {
  static override _verbose_name = 'Export line';
  static override _order_by = ['sequence ASC', 'id ASC'];
  static override fields = {
    doc: fields.ManyToOne('ExportDoc', { required: true, on_delete: 'CASCADE' }),
    sequence: fields.Integer({ default: 10 }),
    label: fields.Char({ required: true }),
    qty: fields.Float(),
    tag: fields.ManyToOne('ExportTag', { on_delete: 'SET NULL' }),
  };
}
`;

/** Plain users read documents and their lines, not tags. */
const USER_ACCESS = ['ExportDoc', 'ExportLine'].map((m) => `- data_type: ModelAccess
  identifier: access_${m.toLowerCase()}_user
  name: ${m} / users
  model: ${m}
  group: core.group_user
  read_perm: true
  write_perm: false
  create_perm: false
  delete_perm: false
`).join('');

/** A group of the restricted key only (administrators are users too, so a rule on users would bind them). */
const RESTRICTED = `- data_type: Group
  identifier: group_restricted
  name: Restricted exporters
- data_type: RecordRule
  identifier: rule_exportdoc_restricted
  name: Restricted exporters see public documents
  model: ExportDoc
  filter: "~Q(name__startswith='Hidden')"
  groups: [export_probe.group_restricted]
`;

/** German, which no built-in module translates: the labels come from this module alone. */
const GERMAN = `models:
  ExportDoc:
    label: Übersicht der Dokumente
    fields:
      name: Bezeichnung
      due: Fälligkeit
      state: Status
      contact: Verknüpfter Kontakt
    selections:
      state:
        draft: Entwurf
        sent: Versendet
  Contact:
    fields:
      name: Kontaktname
`;

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const today = () => new Date().toISOString().slice(0, 10);

let t: TestDatabase;
let root: string;
let userKey: string;
const ids: Record<string, number> = {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-export-'));
  await writeProbeModule(root, 'export_probe', {
    'manifest.yaml': 'name: export_probe\nidentifier: export_probe\ndependencies: [core, contacts]\n',
    'models/index.ts': MODELS,
    'security/access.yaml': adminAccessYaml(['ExportDoc', 'ExportLine', 'ExportTag']) + USER_ACCESS,
    'security/rules.yaml': RESTRICTED,
    'i18n/de.yaml': GERMAN,
  });
  t = await testDatabase('full', [root]);
  await t.platform.install(t.name, { init: ['export_probe'] });
  await t.run(async () => {
    const Tag = modelOf('ExportTag');
    const Doc = modelOf('ExportDoc');
    const Currency = modelOf('Currency');
    ids.red = (await Tag.create({ name: 'red', identifier: 'export_probe.tag_red' })).id;
    ids.blue = (await Tag.create({ name: 'blue' })).id;
    // KWD has three decimals, JPY none (data/currencies.ts).
    ids.kwd = (await Currency.query({ name: 'KWD' }).with_archived().first())!.id;
    ids.jpy = (await Currency.query({ name: 'JPY' }).with_archived().first())!.id;
    ids.alice = (await modelOf('Contact').create({ name: 'Alice' })).id;
    const other = await Company.create({ name: 'Export Elsewhere' });
    ids.foreign = (await modelOf('Contact').create({ name: 'Foreign contact', company: other.id })).id;
    ids.alpha = (await Doc.create({
      name: 'Alpha', notes: 'multi\nline & <xml>', quantity: 7, ratio: 0.25, currency: ids.kwd, amount: 12.5, due: '2026-03-01',
      stamp: '2026-03-01T13:45:10Z', done: true, state: 'sent', contact: ids.alice, main_tag: ids.red, tags: [ids.red, ids.blue],
      lines: [{ label: 'first', qty: 1.5, tag: ids.red, sequence: 1 }, { label: 'second', qty: 2, sequence: 2 }, { label: 'third', sequence: 3 }],
    })).id;
    ids.bravo = (await Doc.create({ name: 'Bravo', currency: ids.jpy, amount: 1200, done: false, contact: ids.foreign })).id;
    ids.charlie = (await Doc.create({ name: 'Charlie', quantity: -3 })).id;
    ids.hidden = (await Doc.create({ name: 'Hidden one', quantity: 1 })).id;
    ids.archived = (await Doc.create({ name: 'Archived', active: false })).id;
    userKey = (await createServiceAccountKey({ name: 'export user', groups: ['core.group_user', 'export_probe.group_restricted'] })).key;
  });
});
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function exportFile(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST', url: '/api/export/ExportDoc',
    headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
}

/** The first worksheet read back by exceljs: rows of cell values (1-based columns dropped to 0-based). */
async function sheetOf(body: Buffer) {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(body as never);
  const sheet = workbook.worksheets[0]!;
  const rows: unknown[][] = [];
  const formats: (string | undefined)[][] = [];
  // Empty cells are holes in exceljs's rows, trailing ones absent: each row is padded to the sheet's width.
  const width = sheet.columnCount;
  sheet.eachRow({ includeEmpty: true }, (row, n) => {
    const values = row.values as unknown[];
    rows[n - 1] = Array.from({ length: width }, (_v, i) => values[i + 1] ?? null);
    formats[n - 1] = Array.from({ length: width }, (_v, i) => row.getCell(i + 1).numFmt);
  });
  return { name: sheet.name, rows: Array.from(rows, (r) => r ?? Array.from({ length: width }, () => null)), formats };
}

async function exported(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await exportFile(body, headers);
  expect(res.statusCode, res.body).toBe(200);
  return { res, ...(await sheetOf(res.rawPayload)) };
}

/** The first column (the record names) of the data rows. */
const names = (rows: unknown[][]) => rows.slice(1).map((r) => r[0]);

describe('which records', () => {
  it('with neither ids nor a filter: every record the caller can see (archived ones out), in id order', async () => {
    const { rows } = await exported({ fields: ['name'] });
    expect(rows[0]).toEqual(['Name']);
    expect(names(rows)).toEqual(['Alpha', 'Bravo', 'Charlie', 'Hidden one']);
  });

  it('with a filter: its matches minus exclude_ids; name_search narrows too', async () => {
    expect(names((await exported({ fields: ['name'], filter_str: 'Q(quantity__isnull=False)', exclude_ids: [ids.hidden] })).rows))
      .toEqual(['Alpha', 'Charlie']);
    expect(names((await exported({ fields: ['name'], name_search: ['rav'] })).rows)).toEqual(['Bravo']);
    // exclude_ids without a filter: every visible record minus those.
    expect(names((await exported({ fields: ['name'], exclude_ids: [ids.bravo] })).rows)).toEqual(['Alpha', 'Charlie', 'Hidden one']);
    // A filter naming `active` reaches archived records, as on /api/query.
    expect(names((await exported({ fields: ['name'], filter_str: 'Q(active=False)' })).rows)).toEqual(['Archived']);
  });

  it('with ids: those records in the order sent (duplicates collapsed), archived ones included', async () => {
    const { rows } = await exported({ fields: ['name'], ids: [ids.charlie, ids.archived, ids.alpha, ids.charlie] });
    expect(names(rows)).toEqual(['Charlie', 'Archived', 'Alpha']);
  });

  it('an id that does not exist → 404 for the whole call, as JSON', async () => {
    const res = await exportFile({ fields: ['name'], ids: [ids.alpha, 99999999] });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ error: 'NotFound', detail: expect.stringContaining('99999999') });
  });
});

describe('cells', () => {
  it('are typed: numbers, real dates, booleans, amounts with their currency\'s decimals, Selection labels, names and name lists', async () => {
    const fields = ['name', 'quantity', 'ratio', 'amount', 'due', 'stamp', 'done', 'state', 'contact', 'contact/name', 'tags', 'notes', 'currency/name'];
    const { rows, formats, name } = await exported({ fields, ids: [ids.alpha, ids.bravo, ids.charlie] });
    expect(name).toBe('Export document');
    expect(rows[0]).toEqual(['Name', 'Quantity', 'Ratio', 'Amount', 'Due', 'Stamp', 'Done', 'State', 'Contact', 'Contact/Name', 'Tags', 'Notes', 'Currency/Name']);
    const [alpha, bravo, charlie] = rows.slice(1);
    expect(alpha).toEqual([
      'Alpha', 7, 0.25, 12.5, new Date('2026-03-01T00:00:00Z'), new Date('2026-03-01T13:45:10Z'), true, 'Sent out', 'Alice', 'Alice',
      'red, blue', 'multi\nline & <xml>', 'KWD',
    ]);
    expect(formats[1]![3]).toBe('#,##0.000');
    expect(formats[1]![4]).toBe('yyyy-mm-dd');
    // JPY: no decimals. The foreign company's contact is not the caller's to read: empty cells.
    expect(bravo!.slice(0, 9)).toEqual(['Bravo', null, null, 1200, null, null, false, 'Draft', null]);
    expect(formats[2]![3]).toBe('#,##0');
    expect(charlie!.slice(0, 2)).toEqual(['Charlie', -3]);
  });

  it('lays out to-many paths one line per row, the first on the record\'s own row', async () => {
    const { rows } = await exported({ fields: ['name', 'lines/label', 'lines/qty', 'lines/tag', 'quantity'], ids: [ids.alpha, ids.charlie] });
    expect(rows.slice(1)).toEqual([
      ['Alpha', 'first', 1.5, 'red', 7],
      [null, 'second', 2, null, null],
      [null, 'third', null, null, null],
      ['Charlie', null, null, null, -3],
    ]);
  });

  it('heads columns with labels in the caller\'s language, and shows Selection labels in it', async () => {
    const de = await t.run(async () => (await Language.query({ code: 'de' }).with_archived().first())!.id);
    const activated = await t.api('PUT', `/api/update/Language/${de}`, { active: true });
    expect(activated.statusCode, activated.body).toBe(200);
    const { rows, res } = await exported({ fields: ['name', 'due', 'state', 'contact/name'], ids: [ids.alpha] }, { 'accept-language': 'de-CH, en;q=0.5' });
    expect(rows[0]).toEqual(['Bezeichnung', 'Fälligkeit', 'Status', 'Verknüpfter Kontakt/Kontaktname']);
    expect(rows[1]).toEqual(['Alpha', new Date('2026-03-01T00:00:00Z'), 'Versendet', 'Alice']);
    // The file is named in that language too, with an ASCII fallback and RFC 6266's filename*.
    const name = `Übersicht der Dokumente ${today()}.xlsx`;
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="Ubersicht der Dokumente ${today()}.xlsx"; filename*=UTF-8''${encodeURIComponent(name)}`);
    // The context's lang wins over the header.
    expect((await exported({ fields: ['name'], ids: [ids.alpha], context: { lang: 'en' } }, { 'accept-language': 'de' })).rows[0]).toEqual(['Name']);
  });
});

describe('import-compatible', () => {
  it('heads with paths, writes identifiers (else names), Selection values, and lines on rows whose first cell is blank', async () => {
    const fields = ['name', 'state', 'main_tag', 'tags', 'lines/label', 'lines/tag', 'due'];
    const { rows } = await exported({ fields, ids: [ids.alpha, ids.bravo], import_compatible: true });
    expect(rows).toEqual([
      fields,
      ['Alpha', 'sent', 'export_probe.tag_red', 'export_probe.tag_red,blue', 'first', 'export_probe.tag_red', new Date('2026-03-01T00:00:00Z')],
      [null, null, null, null, 'second', null, null],
      [null, null, null, null, 'third', null, null],
      ['Bravo', 'draft', null, null, null, null, null],
    ]);
  });

  it('without fields: the settable stored fields, the name first and the identifier last', async () => {
    const { rows } = await exported({ ids: [ids.charlie], import_compatible: true });
    expect(rows[0]![0]).toBe('name');
    expect(rows[0]!.at(-1)).toBe('identifier');
    expect(rows[0]).toContain('tags');
    expect(rows[0]).not.toContain('secret');
    expect(rows[0]).not.toContain('created_date');
  });

  it('refuses a first column through lines, which an import could not tell from a line', async () => {
    const res = await exportFile({ fields: ['lines/label', 'name'], import_compatible: true });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/first column/);
  });
});

describe('access', () => {
  const asUser = (body: Record<string, unknown>) => exportFile(body, { authorization: `Bearer ${userKey}` });

  it('a restricted key exports only its rows; a related model it may not read is an empty column', async () => {
    const res = await asUser({ fields: ['name', 'main_tag', 'tags', 'lines/label', 'lines/tag/name'], filter_str: '' });
    expect(res.statusCode, res.body).toBe(200);
    const { rows } = await sheetOf(res.rawPayload);
    expect(names(rows).filter((n) => n !== null)).toEqual(['Alpha', 'Bravo', 'Charlie']);
    expect(rows[1]).toEqual(['Alpha', null, null, 'first', null]);
    expect(rows[2]).toEqual([null, null, null, 'second', null]);
  });

  it('a restricted key asking for a record it cannot see → 404, not an empty file', async () => {
    const res = await asUser({ fields: ['name'], ids: [ids.alpha, ids.hidden] });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('NotFound');
  });
});

describe('refusals are 400 {detail, error}, never a file', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['an unknown field', { fields: ['name', 'nope'] }, /unknown field 'nope'/],
    ['an unknown field through a relation', { fields: ['contact/nope'] }, /unknown field 'nope' on model Contact/],
    ['a path through a plain field', { fields: ['name/x'] }, /not a relation/],
    ['a binary field', { fields: ['secret'] }, /Binary fields are not exported/],
    ['lines of lines', { fields: ['contact/sale_orders/name'] }, /unknown field|to-many/],
    ['ids with a filter', { ids: [1], filter_str: '' }, /not both/],
    ['ids that are not ids', { ids: ['a'] }, /ids/],
    ['fields that are not strings', { fields: [1] }, /fields/],
    ['an empty fields list', { fields: [] }, /names no column/],
    ['a non-boolean import_compatible', { import_compatible: 'yes' }, /import_compatible/],
    ['a misspelt key', { filter: 'Q(x=1)' }, /Unknown key 'filter'/],
    ['a bad filter', { filter_str: 'Q(nope=1)' }, /nope/],
    ['too many columns', { fields: Array.from({ length: 101 }, () => 'name') }, /at most 100 columns/],
    ['a path too deep', { fields: ['contact/company/partner/company/partner/name'] }, /deeper|unknown/],
  ];
  for (const [what, body, detail] of cases) {
    it(what, async () => {
      const res = await exportFile(body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ detail: expect.stringMatching(detail), error: expect.any(String), ...(res.json().traceback ? { traceback: expect.any(String) } : {}) });
    });
  }

  it('a model that does not exist → 404', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/api/export/NoSuchModel',
      headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' }, payload: '{}',
    });
    expect(res.statusCode).toBe(404);
  });
});

describe('the answer', () => {
  it('is an XLSX attachment named "<Verbose name> <YYYY-MM-DD>.xlsx"', async () => {
    const res = await exportFile({ fields: ['name'], ids: [ids.alpha] });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(XLSX);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="Export document ${today()}.xlsx"`);
    // A ZIP (the XLSX container) from its first bytes.
    expect(res.rawPayload.subarray(0, 2).toString('latin1')).toBe('PK');
  });

  it('reads the records in pages: the statements do not grow with the rows', async () => {
    await t.run(async () => {
      const Doc = modelOf('ExportDoc');
      await Doc.create_many(Array.from({ length: 2500 }, (_v, i) => ({ name: `Bulk ${String(i).padStart(4, '0')}`, quantity: i, contact: ids.alice, tags: [ids.red] })));
    });
    const fields = ['name', 'quantity', 'contact', 'tags', 'due'];
    const few = await t.countStatements(() => exported({ fields, filter_str: "Q(name__startswith='Alpha')" }));
    let sheetRows = 0;
    const many = await t.countStatements(async () => {
      sheetRows = (await exported({ fields, filter_str: "Q(name__startswith='Bulk')" })).rows.length;
    });
    expect(sheetRows).toBe(2501);
    // 2,500 records are three pages of 1,000: two statements more than one page, whatever the relations.
    expect(many.count - few.count).toBeLessThanOrEqual(2);
    const pageReads = many.statements.filter((s) => /"export_doc"/.test(s) && /\bLIMIT\b/i.test(s));
    expect(pageReads.length).toBe(3);
  });
});

describe('LibreOffice', () => {
  it('opens the file: its CSV conversion holds the cells', async (ctx) => {
    const binary = await run('sh', ['-c', 'command -v libreoffice || command -v soffice']).then((r) => r.stdout.trim()).catch(() => '');
    if (!binary) {
      ctx.skip('libreoffice is not installed (apt-get install libreoffice-calc): the exceljs read-back above still checks the cells');
      return;
    }
    const { res } = await exported({ fields: ['name', 'amount', 'due', 'done', 'state', 'tags', 'lines/label'], ids: [ids.alpha, ids.bravo] });
    const dir = await mkdtemp(join(tmpdir(), 'ff-export-lo-'));
    try {
      await writeFile(join(dir, 'export.xlsx'), res.rawPayload);
      // UTF-8 (76), cells as shown (the last `true`): formats apply as a spreadsheet user sees them.
      await run(binary, ['--headless', `-env:UserInstallation=file://${dir}/profile`, '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true', '--outdir', dir, join(dir, 'export.xlsx')], { timeout: 120_000 });
      const csv = (await readFile(join(dir, 'export.csv'), 'utf8')).trim().split('\n');
      expect(csv).toEqual([
        'Name,Amount,Due,Done,State,Tags,Lines/Label',
        'Alpha,12.500,2026-03-01,TRUE,Sent out,"red, blue",first',
        ',,,,,,second',
        ',,,,,,third',
        'Bravo,"1,200",,FALSE,Draft,,',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
