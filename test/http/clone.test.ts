/**
 * Clone (CONTRACTS C1): copies of the records a selection matches, answered in its order. A copy
 * takes stored settable fields and ManyToMany links, owned OneToMany lines are copied with it
 * (other OneToMany left alone), the Char `_rec_name` gets ` (copy)` (shortened to fit), `copy:
 * false` fields take their default, identifier/audit columns are fresh, stored computed fields are
 * recomputed, a unique clash is `item <index>: …` with nothing written. A probe module declares
 * each kind of field; sales orders and project tasks show it on real models.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import type { Model } from '../../src/orm/model.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODELS = `
import { Model, fields } from 'fieldforge';

export class CloneProbe extends Model {
  static override _unique_together = [['name']];
  static override fields = {
    name: fields.Char({ required: true, max_length: 20 }),
    code: fields.Char({ copy: false, default: 'NEW' }),
    note: fields.Text(),
    locked: fields.Char({ readonly: true }),
    amount: fields.Integer({ default: 0 }),
    doubled: fields.Integer({ calculate: 'calc_doubled', store: true, depends: ['amount'] }),
    label: fields.Char({ calculate: 'calc_label', store: true, editable: true, depends: ['amount'] }),
    kept_label: fields.Char({ calculate: 'calc_label', store: true, editable: true, depends: ['amount'], copy: true }),
    tags: fields.ManyToMany('CloneTag', { related_name: 'probes' }),
    lines: fields.OneToMany('CloneLine', 'probe'),
    notes: fields.OneToMany('CloneNote', 'probe'),
  };
  declare amount: number;
  calc_doubled(): number { return (this.amount ?? 0) * 2; }
  calc_label(): string { return 'amount ' + this.amount; }
}

export class CloneTag extends Model {
  static override fields = { name: fields.Char({ required: true }) };
}

/** Owned by its probe (CASCADE): copied with it. */
export class CloneLine extends Model {
  static override _order_by = ['sequence ASC', 'id ASC'];
  static override fields = {
    probe: fields.ManyToOne('CloneProbe', { required: true, on_delete: 'CASCADE' }),
    sequence: fields.Integer({ default: 10 }),
    name: fields.Char({ required: true }),
    qty: fields.Integer({ default: 1 }),
    tags: fields.ManyToMany('CloneTag'),
  };
}

/** Refers to a probe without belonging to it (SET NULL): left with the original. */
export class CloneNote extends Model {
  static override fields = {
    probe: fields.ManyToOne('CloneProbe', { on_delete: 'SET NULL' }),
    name: fields.Char({ required: true }),
  };
}
`;

let t: TestDatabase;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-clone-'));
  await writeProbeModule(root, 'clone_probe', {
    'models/index.ts': PROBE_MODELS,
    'security/access.yaml': adminAccessYaml(['CloneProbe', 'CloneTag', 'CloneLine', 'CloneNote']),
  });
  t = await testDatabase('full', [root]);
  await t.platform.install(t.name, { init: ['clone_probe', 'sales'] });
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function ok(method: 'POST' | 'PUT', url: string, body: unknown): Promise<any> {
  const res = await t.api(method, url, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const fetch = (model: string, id: number, fields: string[]) => ok('POST', `/api/fetch/${model}/${id}`, { fields });

describe('clone', () => {
  it('copies values, links and owned lines; recomputes stored computed fields; `copy: false` takes the default; nothing of the original changes', async () => {
    const [red, blue] = await ok('POST', '/api/bulk-create/CloneTag', [{ name: 'red' }, { name: 'blue' }]);
    const [probe] = await ok('POST', '/api/bulk-create/CloneProbe', [{
      name: 'Probe', code: 'P-1', note: 'a note', amount: 4, label: 'typed label', kept_label: 'typed too', identifier: 'clone.probe',
      tags: [red.id, blue.id], lines: [{ name: 'line b', sequence: 2, qty: 5, tags: [red.id] }, { name: 'line a', sequence: 1 }],
    }]);
    // A readonly field is set by model code (not the API's to write) and not copied.
    await t.run(() => modelOf<typeof Model>('CloneProbe').query({ id: probe.id }).update({ locked: 'by code' }));
    const note = await ok('POST', '/api/create/CloneNote', { name: 'a remark', probe: probe.id });

    const [copy] = await ok('POST', '/api/clone/CloneProbe', { ids: [probe.id] });
    expect(copy).toEqual({ id: expect.any(Number), name: 'Probe (copy)', display_name: 'Probe (copy)' });
    expect(copy.id).not.toBe(probe.id);
    const fields = ['name', 'code', 'note', 'locked', 'amount', 'doubled', 'label', 'kept_label', 'identifier', 'tags', 'lines.name', 'lines.qty', 'lines.tags', 'notes', 'created_date'];
    const original = await fetch('CloneProbe', probe.id, fields);
    const copied = await fetch('CloneProbe', copy.id, fields);
    expect(copied).toMatchObject({
      name: 'Probe (copy)', code: 'NEW', note: 'a note', locked: null, amount: 4, doubled: 8,
      // An editable computed field is recomputed unless declared `copy: true`.
      label: 'amount 4', kept_label: 'typed too', identifier: null, notes: [],
    });
    expect(copied.tags.map((x: any) => x.id).sort()).toEqual([red.id, blue.id].sort());
    expect(copied.lines.map((l: any) => [l.name, l.qty, l.tags.map((x: any) => x.id)])).toEqual([['line a', 1, []], ['line b', 5, [red.id]]]);
    // The lines are new records; the original keeps its own, and its note.
    expect(copied.lines.map((l: any) => l.id)).not.toEqual(expect.arrayContaining(original.lines.map((l: any) => l.id)));
    expect(original).toMatchObject({ name: 'Probe', code: 'P-1', locked: 'by code', label: 'typed label', identifier: 'clone.probe', notes: [{ id: note.id }] });
    expect(original.lines).toHaveLength(2);
  });

  it('shortens a name so that ` (copy)` fits its max_length', async () => {
    const [long] = await ok('POST', '/api/bulk-create/CloneProbe', [{ name: 'ABCDEFGHIJKLMNOPQRST' }]);
    const [copy] = await ok('POST', '/api/clone/CloneProbe', { ids: [long.id] });
    expect(copy.name).toBe('ABCDEFGHIJKLM (copy)');
    expect(copy.name).toHaveLength(20);
  });

  it('a copy breaking a unique key is refused as `item <index>: …`, nothing written', async () => {
    const [one, two] = await ok('POST', '/api/bulk-create/CloneProbe', [{ name: 'Unique one' }, { name: 'Unique two', lines: [{ name: 'x' }] }]);
    await ok('POST', '/api/clone/CloneProbe', { ids: [two.id] });
    const probes = await ok('POST', '/api/query/CloneProbe', { counter: true, limit: 1 });
    const lines = await ok('POST', '/api/query/CloneLine', { counter: true, limit: 1 });
    // `Unique two (copy)` exists now: the second record of this selection clashes.
    const res = await t.api('POST', '/api/clone/CloneProbe', { ids: [one.id, two.id] });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().detail).toMatch(/^item 1: .*'name' must be unique/);
    expect((await ok('POST', '/api/query/CloneProbe', { counter: true, limit: 1 })).count).toBe(probes.count);
    expect((await ok('POST', '/api/query/CloneLine', { counter: true, limit: 1 })).count).toBe(lines.count);
  });

  it('answers the copies in the selection\'s order: ids as sent, or the model\'s default order for a filter', async () => {
    const made = await ok('POST', '/api/bulk-create/ProjectTask', [
      { name: 'Order b', sequence: 2 }, { name: 'Order a', sequence: 1 }, { name: 'Order c', sequence: 3 },
    ]);
    const byIds = await ok('POST', '/api/clone/ProjectTask', { ids: [made[2].id, made[0].id, made[2].id] });
    expect(byIds.map((r: any) => r.name)).toEqual(['Order c (copy)', 'Order b (copy)']);
    const byFilter = await ok('POST', '/api/clone/ProjectTask', { filter_str: "Q(name__startswith='Order ') & ~Q(name__endswith='(copy)')" });
    expect(byFilter.map((r: any) => r.name)).toEqual(['Order a (copy)', 'Order b (copy)', 'Order c (copy)']);
  });

  it('copies a task\'s subtasks (archived ones too) and tags, not the tasks a tag carries', async () => {
    const tags = await ok('POST', '/api/bulk-create/ProjectTag', [{ name: 'clone tag' }]);
    const [task] = await ok('POST', '/api/bulk-create/ProjectTask', [{
      name: 'Parent task', planned_hours: 6, effective_hours: 2, tags: [tags[0].id],
      subtasks: [{ name: 'Child open' }, { name: 'Child archived', active: false, subtasks: [{ name: 'Grandchild' }] }],
    }]);
    const [copy] = await ok('POST', '/api/clone/ProjectTask', { ids: [task.id] });
    const copied = await fetch('ProjectTask', copy.id, ['name', 'remaining_hours', 'subtask_count', 'tags', 'created_by']);
    expect(copied).toMatchObject({ name: 'Parent task (copy)', remaining_hours: 4, subtask_count: 1, tags: [{ id: tags[0].id }] });
    const children = await t.run(() => ProjectTask.query({ parent: copy.id }).with_archived().order_by('name ASC').read(['name', 'active', 'subtasks.name']));
    // Lines keep their names; the copy of an archived line is archived.
    expect(children).toMatchObject([
      { name: 'Child archived', active: false, subtasks: [{ name: 'Grandchild' }] },
      { name: 'Child open', active: true, subtasks: [] },
    ]);
    const [tagCopy] = await ok('POST', '/api/clone/ProjectTag', { ids: [tags[0].id] });
    expect(tagCopy.name).toBe('clone tag (copy)');
    expect(await t.run(() => ProjectTask.query({ tags: tagCopy.id }).count())).toBe(0);
  });

  it('copies a sales order with its lines: a new reference, totals recomputed, prices kept', async () => {
    const customer = await t.run(async () => (await Contact.create({ name: 'Clone customer' })).id);
    const [widget] = await ok('POST', '/api/bulk-create/Product', [{ name: 'Clone widget', list_price: 3.5 }]);
    const order = await ok('POST', '/api/create/SaleOrder', {
      customer, note: 'terms', order_lines: [{ product: widget.id, quantity: 2 }, { product: widget.id, quantity: 1, name: 'Custom text' }],
    });
    const [copy] = await ok('POST', '/api/clone/SaleOrder', { ids: [order.id] });
    const fields = ['name', 'note', 'customer', 'amount_total', 'stage', 'order_lines.name', 'order_lines.quantity', 'order_lines.subtotal'];
    const original = await fetch('SaleOrder', order.id, fields);
    const copied = await fetch('SaleOrder', copy.id, fields);
    // The reference is computed from the id (an editable computed field): the copy gets its own.
    expect(copied.name).toBe(`S${String(copy.id).padStart(5, '0')}`);
    expect(copy.name).toBe(copied.name);
    expect(copied).toMatchObject({ note: 'terms', customer: { id: customer }, amount_total: 10.5, stage: original.stage });
    expect(copied.order_lines.map((l: any) => [l.quantity, l.subtotal])).toEqual(original.order_lines.map((l: any) => [l.quantity, l.subtotal]));
    // A description follows its product again on the copy (recomputed), as Odoo does for computed fields.
    expect(copied.order_lines.map((l: any) => l.name).sort()).toEqual(['Clone widget', 'Clone widget']);
  });

  it('refuses a body that selects nothing, or ids with a filter', async () => {
    for (const body of [{}, { exclude_ids: [1] }, { ids: [1], filter_str: '' }, [1, 2], 'x']) {
      const res = await t.api('POST', '/api/clone/ProjectTask', body);
      expect(res.statusCode, res.body).toBe(400);
    }
    expect((await t.api('POST', '/api/clone/ProjectTask', { ids: [99999999] })).statusCode).toBe(404);
  });
});
