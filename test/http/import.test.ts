/**
 * POST /api/import/{model} (spec §4.8, CONTRACTS C3) to the letter, on the PostgreSQL server and on
 * embedded PGlite (the same suite, one database per engine): the answer's shapes, matching by
 * identifier / id / match_fields, dates, relations by identifier, id and display name (ambiguous,
 * missing, created), ManyToMany lists, OneToMany lines on following rows, per-row isolation of
 * every kind of failure in the default mode, atomic and dry-run modes, access, bad request shapes
 * and progress. The statement count per batch is proven flat in `import-statements.test.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ContactTag } from '../../modules/contacts/models/contact_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { createEngine } from '../../src/db/create-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import type { Model } from '../../src/orm/model.js';
import { createDatabase } from '../../src/platform/database-lifecycle.js';
import { Platform } from '../../src/platform/platform.js';
import { testDatabase } from '../support/test-database.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One engine's database: an app, the platform, an administrator's and a restricted user's keys. */
interface Harness {
  app: FastifyInstance;
  dbName: string;
  platform: Platform;
  close(): Promise<void>;
}

async function onServer(): Promise<Harness> {
  const t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  return { app: t.app, dbName: t.name, platform: t.platform, close: () => t.close() };
}

async function onPglite(): Promise<Harness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ff-pglite-import-'));
  const engine = createEngine({ dataDir });
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  await createDatabase(platform, 'main', { modules: ['contacts', 'project', 'sales'], adminPassword: 'pglite-import-admin-password' });
  const app = await buildApp(platform);
  return {
    app, dbName: 'main', platform,
    async close() {
      await app.close();
      await platform.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const ENGINES = [['PostgreSQL', onServer], ['PGlite', onPglite]] as const;

/** Spreadsheet serial number of a day (days since 1899-12-30). */
const serial = (iso: string) => (Date.parse(`${iso}T00:00:00Z`) - Date.UTC(1899, 11, 30)) / 86_400_000;

describe.each(ENGINES)('import on %s', (_engine, open) => {
  let h: Harness;
  let admin: string;
  let user: string;
  let reader: string;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    h = await open();
    await run(async () => {
      ({ key: admin } = await createServiceAccountKey({ name: 'import admin', groups: ['core.group_admin', 'core.group_user'] }));
      ({ key: user } = await createServiceAccountKey({ name: 'import user', groups: ['core.group_user', 'project.group_project_user', 'contacts.group_contacts_user'] }));
      ({ key: reader } = await createServiceAccountKey({ name: 'import reader', groups: ['core.group_user'] }));
      const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
      await RecordRule.create({ name: 'Important tasks', model: 'ProjectTask', filter: "Q(priority__in=['1', '2'])", groups: [projectUser] });
      ids.hidden = (await ProjectTask.create({ name: 'Imp hidden', priority: '0', identifier: 'imp.hidden_task' })).id;
      ids.visible = (await ProjectTask.create({ name: 'Imp visible', priority: '1' })).id;
      ids.vip = (await ContactTag.create({ name: 'Imp VIP', identifier: 'imp.tag_vip' })).id;
      ids.supplier = (await ContactTag.create({ name: 'Imp Supplier' })).id;
      ids.acme = (await Contact.create({ name: 'Imp Acme', is_company: true, identifier: 'imp.acme', email: 'acme@imp.test' })).id;
      ids.twin1 = (await Contact.create({ name: 'Imp Twin', email: 'twin1@imp.test' })).id;
      ids.twin2 = (await Contact.create({ name: 'Imp Twin', email: 'twin2@imp.test' })).id;
    });
    const products = await ok('POST', '/api/bulk-create/Product', [{ name: 'Imp Widget', list_price: 2.5 }, { name: 'Imp Gadget', list_price: 10 }]);
    ids.widget = products[0].id;
    ids.gadget = products[1].id;
  }, 240_000);
  afterAll(async () => { await h?.close(); });

  function run<T>(fn: () => Promise<T>): Promise<T> {
    return h.platform.run(h.dbName, {}, fn);
  }
  function api(method: Method, url: string, body?: unknown, key = admin): Promise<LightMyRequestResponse> {
    return h.app.inject({
      method, url,
      headers: { authorization: `Bearer ${key}`, 'x-db-name': h.dbName, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  }
  async function ok(method: Method, url: string, body?: unknown, key = admin): Promise<any> {
    const res = await api(method, url, body, key);
    expect(res.statusCode, `${method} ${url}: ${res.body.slice(0, 600)}`).toBe(200);
    return res.json();
  }
  const importing = (model: string, body: Record<string, unknown>, key = admin) => ok('POST', `/api/import/${model}`, body, key);
  const contacts = (filter: string, fields = ['name', 'email', 'tags', 'parent', 'identifier']) =>
    run(() => Contact.query(filter).with_archived().order_by('id ASC').read(fields));

  describe('answers and matching', () => {
    it('creates records and answers {message, summary, details, success} with rows indexing data (header = row 0)', async () => {
      const answer = await importing('Contact', {
        fields: ['name', 'email', 'is_company'],
        data: [['Name', 'Email', 'Company?'], ['Imp Ann', 'ann@imp.test', 'no'], ['Imp Bob', 'bob@imp.test', true]],
      });
      const made = await contacts("Q(name__in=['Imp Ann', 'Imp Bob'])", ['name', 'is_company']);
      expect(made.map((c) => [c.name, c.is_company])).toEqual([['Imp Ann', false], ['Imp Bob', true]]);
      expect(answer).toEqual({
        message: expect.any(String),
        summary: { total_records: 2, created: 2, updated: 0, errors: 0 },
        details: { creates: [{ row: 1, id: made[0]!.id }, { row: 2, id: made[1]!.id }], updates: [], errors: [] },
        success: true,
      });
    });

    it('matches by the identifier column (creating with the identifier when none matches), and the identifier wins over match_fields', async () => {
      const first = await importing('Contact', {
        fields: ['identifier', 'name', 'email'],
        data: [['identifier', 'name', 'email'], ['imp.carl', 'Imp Carl', 'carl@imp.test']],
      });
      const [carl] = await contacts("Q(identifier='imp.carl')");
      expect(first.details.creates).toEqual([{ row: 1, id: carl!.id }]);
      // Same identifier, an e-mail another contact has: match_fields would pick Acme, the identifier picks Carl.
      const second = await importing('Contact', {
        fields: ['identifier', 'name', 'email'], match_fields: ['email'],
        data: [['identifier', 'name', 'email'], ['imp.carl', 'Imp Carl II', 'acme@imp.test']],
      });
      expect(second.summary).toEqual({ total_records: 1, created: 0, updated: 1, errors: 0 });
      expect(second.details.updates).toEqual([{ row: 1, id: carl!.id }]);
      const [after] = await contacts(`Q(id=${carl!.id})`);
      expect(after).toMatchObject({ name: 'Imp Carl II', email: 'acme@imp.test', identifier: 'imp.carl' });
      const [acme] = await contacts(`Q(id=${ids.acme})`);
      expect(acme!.name).toBe('Imp Acme');
    });

    it('matches by the id column; an unknown id is a row error and never creates a record with that id', async () => {
      const [ann] = await contacts("Q(name='Imp Ann')");
      const answer = await importing('Contact', {
        fields: ['id', 'name'],
        data: [['id', 'name'], [ann!.id, 'Imp Ann B'], [999_999, 'Imp Ghost']],
      });
      expect(answer.summary).toEqual({ total_records: 2, created: 0, updated: 1, errors: 1 });
      expect(answer.details.updates).toEqual([{ row: 1, id: ann!.id }]);
      expect(answer.details.errors).toEqual([{ row: 2, field: 'id', message: expect.stringContaining('999999') }]);
      expect(answer.success).toBe(false);
      expect(await contacts("Q(name='Imp Ghost')")).toEqual([]);
      expect(await run(() => Contact.query({ id: 999_999 }).with_archived().count())).toBe(0);
      // Without a name column, the unknown id is the row's one error: it is not also checked as a create.
      const noName = await importing('Contact', { fields: ['id', 'email'], data: [['id', 'email'], [999_998, 'ghost@example.com']] });
      expect(noName.details.errors).toEqual([{ row: 1, field: 'id', message: expect.stringContaining('999998') }]);
    });

    it('match_fields finds existing records by a natural key; unmatched rows are created; several matches are a row error', async () => {
      const answer = await importing('Contact', {
        fields: ['name', 'email', 'phone'], match_fields: ['name'],
        data: [['n', 'e', 'p'], ['Imp Acme', 'acme@imp.test', '+1 555'], ['Imp Dora', 'dora@imp.test', '+1 556'], ['Imp Twin', 'x@imp.test', '1']],
      });
      const [dora] = await contacts("Q(name='Imp Dora')");
      expect(answer.details).toEqual({
        creates: [{ row: 2, id: dora!.id }],
        updates: [{ row: 1, id: ids.acme }],
        errors: [{ row: 3, message: expect.stringMatching(/2 Contact records match on name/) }],
      });
      const [acme] = await contacts(`Q(id=${ids.acme})`, ['phone']);
      expect(acme!.phone).toBe('+1 555');
    });
  });

  describe('cells', () => {
    it('reads dates in date_format, ISO and as spreadsheet serials; a date that fits none is a row error naming the column', async () => {
      const answer = await importing('ProjectTask', {
        fields: ['name', 'deadline', 'priority'], date_format: 'DD/MM/YYYY',
        data: [['n', 'd', 'p'], ['Imp D1', '31/01/2026', '1'], ['Imp D2', '2026-02-14', 'Urgent'], ['Imp D3', serial('2026-03-17'), '1'],
          ['Imp D4', String(serial('2026-03-18')), '1'], ['Imp D5', '01/31/2026', '1'], ['Imp D6', '31/01/2026', 'nope']],
      });
      const rows = await run(() => ProjectTask.query({ name__startswith: 'Imp D' }).order_by('name ASC').read(['name', 'deadline', 'priority']));
      expect(rows.map((r) => [r.name, r.deadline])).toEqual([['Imp D1', '2026-01-31'], ['Imp D2', '2026-02-14'], ['Imp D3', '2026-03-17'], ['Imp D4', '2026-03-18']]);
      // A Selection reads its value or its label.
      expect(rows[1]!.priority).toBe('2');
      expect(answer.details.errors).toEqual([
        { row: 5, field: 'deadline', message: expect.stringMatching(/'01\/31\/2026'.*not a date.*DD\/MM\/YYYY/) },
        { row: 6, field: 'priority', message: expect.stringContaining("'nope'") },
      ]);
      const us = await importing('ProjectTask', { fields: ['name', 'deadline'], date_format: 'MM/DD/YYYY', data: [['n', 'd'], ['Imp D7', '1/31/2026']] });
      expect(us.success).toBe(true);
      expect((await run(() => ProjectTask.query({ name: 'Imp D7' }).read(['deadline'])))[0]!.deadline).toBe('2026-01-31');
    });

    it('refuses numbers, booleans and over-long text per row, naming column and value', async () => {
      const answer = await importing('ProjectTask', {
        fields: ['name', 'planned_hours', 'active'],
        data: [['n', 'h', 'a'], ['Imp N1', '1,5', 'yes'], ['Imp N2', '2.5', 'perhaps'], ['x'.repeat(300), 1, true], ['Imp N3', 3, 'no']],
      });
      expect(answer.details.errors).toEqual([
        { row: 1, field: 'planned_hours', message: expect.stringMatching(/'1,5'.*not a number/) },
        { row: 2, field: 'active', message: expect.stringMatching(/'perhaps'/) },
        { row: 3, field: 'name', message: expect.stringMatching(/at most 255 characters/) },
      ]);
      expect(answer.summary).toMatchObject({ total_records: 4, created: 1, errors: 3 });
      const [n3] = await run(() => ProjectTask.query({ name: 'Imp N3' }).with_archived().read(['planned_hours', 'active']));
      expect(n3).toMatchObject({ planned_hours: 3, active: false });
    });
  });

  describe('relations', () => {
    it('resolves a ManyToOne by identifier, then id, then exact display name; two names → "ambiguous"; none → error', async () => {
      const answer = await importing('Contact', {
        fields: ['name', 'parent'],
        data: [['n', 'p'], ['Imp R1', 'imp.acme'], ['Imp R2', String(ids.acme)], ['Imp R3', 'Imp Acme'], ['Imp R4', 'Imp Twin'], ['Imp R5', 'Imp Nobody']],
      });
      const made = await contacts("Q(name__startswith='Imp R')");
      expect(made.map((c) => [c.name, (c.parent as any)?.id])).toEqual([['Imp R1', ids.acme], ['Imp R2', ids.acme], ['Imp R3', ids.acme]]);
      expect(answer.details.errors).toEqual([
        { row: 4, field: 'parent', message: expect.stringMatching(/'Imp Twin'.*ambiguous/) },
        { row: 5, field: 'parent', message: expect.stringMatching(/'Imp Nobody'.*no Contact matches/) },
      ]);
    });

    it('contact/identifier resolves only by identifier, tags/ID only by id, parent/email by that field', async () => {
      const answer = await importing('Contact', {
        fields: ['name', 'parent/identifier', 'tags/ID'],
        data: [['n', 'p', 't'], ['Imp S1', 'imp.acme', `${ids.vip},${ids.supplier}`], ['Imp S2', 'Imp Acme', ''], ['Imp S3', '', 'Imp VIP']],
      });
      expect(answer.details.errors).toEqual([
        { row: 2, field: 'parent/identifier', message: expect.stringContaining("no Contact has the identifier 'Imp Acme'") },
        { row: 3, field: 'tags/ID', message: expect.stringContaining("'Imp VIP' is not a record id") },
      ]);
      const [s1] = await contacts("Q(name='Imp S1')");
      expect((s1!.parent as any).id).toBe(ids.acme);
      expect((s1!.tags as any[]).map((t) => t.id).sort((a, b) => a - b)).toEqual([ids.vip, ids.supplier].sort((a, b) => a - b));
      const byEmail = await importing('Contact', { fields: ['name', 'parent/email'], data: [['n', 'p'], ['Imp S4', 'twin1@imp.test'], ['Imp S5', 'none@imp.test']] });
      expect(byEmail.details.errors).toEqual([{ row: 2, field: 'parent/email', message: expect.stringContaining("no Contact has the email 'none@imp.test'") }]);
      expect(((await contacts("Q(name='Imp S4')"))[0]!.parent as any).id).toBe(ids.twin1);
    });

    it('reads ManyToMany as a comma-separated list and creates missing targets where create_fields says so — never in a dry run', async () => {
      const body = {
        fields: ['name', 'tags'], create_fields: [false, true],
        data: [['n', 't'], ['Imp T1', 'imp.tag_vip, Imp Supplier, Imp Brand New'], ['Imp T2', 'Imp Brand New']],
      };
      const dry = await importing('Contact', { ...body, dry_run: true });
      expect(dry).toMatchObject({ success: true, valid: true, dry_run: true, summary: { would_create: 2 } });
      expect(await run(() => ContactTag.query({ name: 'Imp Brand New' }).count())).toBe(0);
      expect(await contacts("Q(name__in=['Imp T1', 'Imp T2'])")).toEqual([]);
      const answer = await importing('Contact', body);
      expect(answer.summary).toMatchObject({ created: 2, errors: 0 });
      const [brandNew] = await run(() => ContactTag.query({ name: 'Imp Brand New' }).ids());
      const made = await contacts("Q(name__in=['Imp T1', 'Imp T2'])");
      expect(made.map((c) => (c.tags as any[]).map((t) => t.id).sort((a, b) => a - b))).toEqual([
        [ids.vip, ids.supplier, brandNew].sort((a, b) => a - b), [brandNew],
      ]);
      // Without create_fields a missing tag is a row error.
      const refused = await importing('Contact', { fields: ['name', 'tags'], data: [['n', 't'], ['Imp T3', 'Imp Unknown Tag']] });
      expect(refused.details.errors).toEqual([{ row: 1, field: 'tags', message: expect.stringContaining("'Imp Unknown Tag'") }]);
    });
  });

  describe('lines and isolation', () => {
    it('attaches rows with a blank first cell to the record above as OneToMany lines; a bad line keeps its whole record out, naming its own row', async () => {
      const answer = await importing('SaleOrder', {
        fields: ['note', 'customer', 'date_order', 'order_lines/product', 'order_lines/quantity'], date_format: 'MM/DD/YYYY',
        data: [
          ['note', 'customer', 'date', 'product', 'qty'],
          ['Imp O1', 'Imp Acme', '03/15/2026', 'Imp Widget', 2],
          ['', '', '', 'Imp Gadget', 1],
          ['Imp O2', 'imp.acme', '2026-03-16', 'Imp Widget', 5],
          ['', '', '', 'Imp Nothing', 1],
          ['Imp O3', String(ids.acme), serial('2026-03-17'), 'Imp Gadget', 3],
          ['', '', '', 'Imp Widget', 'many'],
          ['Imp O4', 'Imp Acme', '', '', ''],
        ],
      });
      expect(answer.summary).toEqual({ total_records: 4, created: 2, updated: 0, errors: 4 });
      // The refused orders' own rows say why they were not imported (held back by their lines).
      expect(answer.details.errors).toEqual([
        { row: 3, message: expect.stringContaining('its line at row 4 has an error'), held_back: true },
        { row: 4, field: 'order_lines/product', message: expect.stringContaining("'Imp Nothing'") },
        { row: 5, message: expect.stringContaining('its line at row 6 has an error'), held_back: true },
        { row: 6, field: 'order_lines/quantity', message: expect.stringContaining("'many'") },
      ]);
      const SaleOrder = () => modelOf<typeof Model>('SaleOrder');
      const orders = await run(() => SaleOrder().query({ note__startswith: 'Imp O' }).order_by('note ASC')
        .read(['note', 'date_order', 'amount_total', 'order_lines.product', 'order_lines.quantity']));
      expect(orders.map((o) => o.note)).toEqual(['Imp O1', 'Imp O4']);
      expect(answer.details.creates.map((c: any) => c.row)).toEqual([1, 7]);
      const o1 = orders[0]!;
      expect(o1.date_order).toBe('2026-03-15');
      expect((o1.order_lines as any[]).map((l) => [l.product.id, l.quantity])).toEqual([[ids.widget, 2], [ids.gadget, 1]]);
      expect(o1.amount_total).toBe(15);
      // Nothing half-written: no line of the refused orders exists.
      expect(await run(() => modelOf<typeof Model>('SaleOrderLine').query({ order__note__in: ['Imp O2', 'Imp O3'] }).count())).toBe(0);
    });

    it('re-importing a record with lines (matched by identifier) replaces its lines; a record row without line cells keeps them', async () => {
      const fields = ['identifier', 'customer', 'note', 'order_lines/product', 'order_lines/quantity'];
      const first = await importing('SaleOrder', {
        fields, data: [fields, ['imp.order_r', 'Imp Acme', 'Imp R order', 'Imp Widget', 1], ['', '', '', 'Imp Gadget', 2]],
      });
      const id = first.details.creates[0].id;
      const lines = () => run(() => modelOf<typeof Model>('SaleOrderLine').query({ order: id }).order_by('id ASC').read(['product', 'quantity']));
      expect((await lines()).map((l: any) => [l.product.id, l.quantity])).toEqual([[ids.widget, 1], [ids.gadget, 2]]);
      const second = await importing('SaleOrder', { fields, data: [fields, ['imp.order_r', 'Imp Acme', 'Imp R order 2', 'Imp Gadget', 5]] });
      expect(second.details.updates).toEqual([{ row: 1, id }]);
      expect((await lines()).map((l: any) => [l.product.id, l.quantity])).toEqual([[ids.gadget, 5]]);
      const third = await importing('SaleOrder', { fields, data: [fields, ['imp.order_r', 'Imp Acme', 'Imp R order 3', '', '']] });
      expect(third.summary.updated).toBe(1);
      expect(await lines()).toHaveLength(1);
    });

    it('a line row before any record, or one giving a record column a value, is a row error', async () => {
      const answer = await importing('SaleOrder', {
        fields: ['note', 'customer', 'order_lines/product'],
        data: [['n', 'c', 'p'], ['', '', 'Imp Widget'], ['Imp O5', 'Imp Acme', 'Imp Widget'], ['', 'Imp Acme', 'Imp Gadget']],
      });
      expect(answer.summary).toEqual({ total_records: 1, created: 0, updated: 0, errors: 3 });
      expect(answer.details.errors.map((e: any) => [e.row, e.field, e.held_back])).toEqual([[1, undefined, undefined], [2, undefined, true], [3, 'customer', undefined]]);
    });

    it('isolates what only the database refuses (a unique key held by a stored record, or twice in the file): good rows still commit', async () => {
      const answer = await importing('ContactTag', {
        fields: ['name', 'color'],
        data: [['n', 'c'], ['Imp U1', 1], ['Imp VIP', 2], ['Imp U2', 3], ['Imp U1', 4], ['Imp U3', 5]],
      });
      expect(answer.summary).toEqual({ total_records: 5, created: 3, updated: 0, errors: 2 });
      expect(answer.details.errors.map((e: any) => e.row)).toEqual([2, 4]);
      expect(answer.details.errors[0].message).toMatch(/name/);
      const names = (await run(() => ContactTag.query({ name__startswith: 'Imp U' }).order_by('name ASC').read(['name', 'color'])));
      expect(names.map((t) => [t.name, t.color])).toEqual([['Imp U1', 1], ['Imp U2', 3], ['Imp U3', 5]]);
      expect(answer.details.creates.map((c: any) => c.row)).toEqual([1, 3, 5]);
    });

    it('reports a required value left empty per row, with the column', async () => {
      const answer = await importing('SaleOrder', {
        fields: ['note', 'customer'],
        data: [['n', 'c'], ['Imp O6', ''], ['Imp O7', 'Imp Acme']],
      });
      expect(answer.details.errors).toEqual([{ row: 1, field: 'customer', message: expect.stringContaining('required') }]);
      expect(answer.summary.created).toBe(1);
    });

    it('applies the write-key rules of spec §4.4: columns no client may set are skipped, as is a column left unmapped (""); an update keeps its identifier', async () => {
      const answer = await importing('ProjectTask', {
        fields: ['identifier', 'name', 'remaining_hours', 'planned_hours', 'created_by', ''],
        data: [['i', 'n', 'r', 'p', 'c', 'x'], ['imp.k1', 'Imp K1', 99, 4, 'whoever', 'not a column']],
      });
      expect(answer.success).toBe(true);
      const [k1] = await run(() => ProjectTask.query({ name: 'Imp K1' }).read(['remaining_hours', 'identifier']));
      expect(k1).toMatchObject({ remaining_hours: 4, identifier: 'imp.k1' });
      // Matched by id, the identifier cell of an update is ignored (spec §4.4 rule 3), the blank deadline cleared.
      await run(() => ProjectTask.query({ name: 'Imp K1' }).update({ deadline: '2026-05-01' }));
      const update = await importing('ProjectTask', {
        fields: ['id', 'identifier', 'name', 'deadline'], data: [['id', 'i', 'n', 'd'], [answer.details.creates[0].id, 'imp.k1.renamed', 'Imp K1 bis', '']],
      });
      expect(update.details.updates).toEqual([{ row: 1, id: answer.details.creates[0].id }]);
      const [after] = await run(() => ProjectTask.query({ id: answer.details.creates[0].id }).read(['name', 'identifier', 'deadline']));
      expect(after).toMatchObject({ name: 'Imp K1 bis', identifier: 'imp.k1', deadline: null });
    });
  });

  describe('modes', () => {
    it('atomic: any error writes nothing, reports created 0, updated 0, and holds back every other row', async () => {
      const [acmeBefore] = await contacts(`Q(id=${ids.acme})`, ['phone']);
      const answer = await importing('Contact', {
        atomic: true, fields: ['identifier', 'name', 'phone'],
        data: [['i', 'n', 'p'], ['imp.acme', 'Imp Acme', '+9 999'], ['imp.atomic1', 'Imp Atomic 1', ''], ['imp.atomic2', '', '']],
      });
      expect(answer).toEqual({
        message: expect.any(String),
        summary: { total_records: 3, created: 0, updated: 0, errors: 3 },
        details: {
          creates: [], updates: [],
          errors: [
            { row: 1, message: expect.stringContaining('all or nothing'), held_back: true },
            { row: 2, message: expect.stringContaining('all or nothing'), held_back: true },
            { row: 3, field: 'name', message: expect.stringContaining('required') },
          ],
        },
        success: false,
      });
      expect(await contacts("Q(name='Imp Atomic 1')")).toEqual([]);
      expect((await contacts(`Q(id=${ids.acme})`, ['phone']))[0]!.phone).toBe(acmeBefore!.phone);
      // A database refusal in atomic mode rolls back what was written before it too.
      const unique = await importing('ContactTag', { atomic: true, fields: ['name'], data: [['n'], ['Imp A1'], ['Imp VIP']] });
      expect(unique.summary).toEqual({ total_records: 2, created: 0, updated: 0, errors: 2 });
      expect(unique.details.errors.map((e: any) => [e.row, e.held_back])).toEqual([[1, true], [2, undefined]]);
      expect(await run(() => ContactTag.query({ name: 'Imp A1' }).count())).toBe(0);
      const fine = await importing('ContactTag', { atomic: true, fields: ['name'], data: [['n'], ['Imp A2']] });
      expect(fine).toMatchObject({ success: true, summary: { created: 1 } });
    });

    it('dry run: the same answer shape with would_create, would_update, valid and dry_run, updates without ids, and nothing written', async () => {
      const before = await run(() => Contact.query('Q()').with_archived().count());
      const answer = await importing('Contact', {
        dry_run: true, fields: ['identifier', 'name'],
        data: [['i', 'n'], ['imp.acme', 'Imp Acme Renamed'], ['imp.dry1', 'Imp Dry 1'], ['imp.dry2', '']],
      });
      expect(answer).toEqual({
        message: expect.any(String),
        summary: { total_records: 3, created: 0, updated: 0, errors: 1, would_create: 1, would_update: 1 },
        details: { creates: [{ row: 2 }], updates: [{ row: 1 }], errors: [{ row: 3, field: 'name', message: expect.any(String) }] },
        success: false, valid: false, dry_run: true,
      });
      expect(await run(() => Contact.query('Q()').with_archived().count())).toBe(before);
      expect((await contacts(`Q(id=${ids.acme})`))[0]!.name).toBe('Imp Acme');
      // A database refusal is found by a dry run too.
      const unique = await importing('ContactTag', { dry_run: true, fields: ['name'], data: [['n'], ['Imp VIP'], ['Imp Dry Tag']] });
      expect(unique).toMatchObject({ valid: false, summary: { would_create: 1, errors: 1 }, details: { errors: [{ row: 1 }] } });
      expect(await run(() => ContactTag.query({ name: 'Imp Dry Tag' }).count())).toBe(0);
    });
  });

  describe('access', () => {
    it('matches only records the caller can see: a hidden id is unknown, a hidden identifier cannot be taken over', async () => {
      const answer = await importing('ProjectTask', {
        fields: ['id', 'name', 'priority'],
        data: [['id', 'n', 'p'], [ids.hidden, 'Imp taken over', '1'], [ids.visible, 'Imp visible 2', '1']],
      }, user);
      expect(answer.details.updates).toEqual([{ row: 2, id: ids.visible }]);
      expect(answer.details.errors).toEqual([{ row: 1, field: 'id', message: expect.stringContaining(String(ids.hidden)) }]);
      const byIdentifier = await importing('ProjectTask', {
        fields: ['identifier', 'name', 'priority'], data: [['i', 'n', 'p'], ['imp.hidden_task', 'Imp taken over', '1']],
      }, user);
      expect(byIdentifier.summary).toMatchObject({ created: 0, updated: 0, errors: 1 });
      const [hidden] = await run(() => ProjectTask.query({ id: ids.hidden }).read(['name']));
      expect(hidden!.name).toBe('Imp hidden');
    });

    it('a caller without the model right gets 403; a record rule refusing the written values is a row error', async () => {
      const refused = await api('POST', '/api/import/ProjectTask', { fields: ['name'], data: [['n'], ['Imp no right']] }, reader);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ error: expect.any(String), detail: expect.any(String) });
      const answer = await importing('ProjectTask', {
        fields: ['name', 'priority'], data: [['n', 'p'], ['Imp rule ok', '2'], ['Imp rule refused', '0']],
      }, user);
      expect(answer.summary).toMatchObject({ created: 1, errors: 1 });
      expect(answer.details.errors[0].row).toBe(2);
      expect(await run(() => ProjectTask.query({ name: 'Imp rule refused' }).count())).toBe(0);
    });
  });

  describe('bad requests', () => {
    it.each([
      ['fields not an array of strings', { fields: ['name', 3], data: [['n']] }],
      ['no fields', { fields: [], data: [['n']] }],
      ['data not rows', { fields: ['name'], data: ['Imp'] }],
      ['data missing', { fields: ['name'] }],
      ['a row longer than fields', { fields: ['name'], data: [['n'], ['a', 'b']] }],
      ['a cell that is an object', { fields: ['name'], data: [['n'], [{ x: 1 }]] }],
      ['an unknown field path', { fields: ['name', 'nope'], data: [['n', 'x']] }],
      ['an unknown relation sub-field', { fields: ['name', 'parent/nope'], data: [['n', 'x']] }],
      ['a path through a scalar', { fields: ['name/x'], data: [['n']] }],
      ['create_fields of the wrong length', { fields: ['name', 'parent'], create_fields: [true], data: [['n', 'p']] }],
      ['create_fields not booleans', { fields: ['name'], create_fields: ['yes'], data: [['n']] }],
      ['match_fields naming a column not imported', { fields: ['name'], match_fields: ['email'], data: [['n']] }],
      ['a date_format without a day', { fields: ['name'], date_format: 'MM/YYYY', data: [['n']] }],
      ['dry_run not a boolean', { fields: ['name'], dry_run: 'yes', data: [['n']] }],
      ['an unknown key', { fields: ['name'], data: [['n']], atomik: true }],
      ['a body that is an array', [['name']]],
    ])('%s → 400 {detail, error}', async (_label, body) => {
      const res = await api('POST', '/api/import/Contact', body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual(expect.objectContaining({ detail: expect.any(String), error: expect.any(String) }));
    });

    it('more data rows than ten times FF_BULK_MAX → 400 naming the maximum', async () => {
      const small = await buildApp(h.platform, { bulkMax: 2 });
      try {
        const send = (rows: number) => small.inject({
          method: 'POST', url: '/api/import/ContactTag',
          headers: { authorization: `Bearer ${admin}`, 'x-db-name': h.dbName, 'content-type': 'application/json' },
          payload: JSON.stringify({ fields: ['name'], data: [['n'], ...Array.from({ length: rows }, (_, i) => [`Imp Max ${rows}-${i}`])], dry_run: true }),
        });
        const refused = await send(21);
        expect(refused.statusCode, refused.body).toBe(400);
        expect(refused.json().detail).toMatch(/at most 20 data rows/);
        expect((await send(20)).statusCode).toBe(200);
      } finally {
        await small.close();
      }
    });

    it('an unknown model is a 404', async () => {
      const res = await api('POST', '/api/import/NoSuchModel', { fields: ['name'], data: [['n']] });
      expect(res.statusCode).toBe(404);
    });
  });

  describe('progress', () => {
    it('records {done, total} under progress_id, readable only by the user who started the import', async () => {
      const data = [['n'], ...Array.from({ length: 30 }, (_, i) => [`Imp P${i}`])];
      await importing('ContactTag', { fields: ['name'], data, progress_id: 'imp-progress-1' });
      expect(await ok('GET', '/api/import-progress/imp-progress-1')).toEqual({ done: 30, total: 30 });
      expect((await api('GET', '/api/import-progress/imp-progress-1', undefined, user)).statusCode).toBe(404);
      expect((await api('GET', '/api/import-progress/never-started')).statusCode).toBe(404);
    });
  });
});
