/**
 * The data loader writes in batches (`src/modules/data-batch.ts`): loading N records of a model
 * costs the same statements whatever N; an upgrade whose data did not change writes nothing; one
 * that changed a value writes that record only. Counted with `t.countStatements`, which sees every
 * statement the database executes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManyToManyField } from '../../src/orm/fields/relational-fields.js';
import { currentEnv } from '../../src/orm/env.js';
import { QuerySet } from '../../src/orm/queryset.js';
import { writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const FEW = 5;
const MANY = 200;

let root: string;
let few: TestDatabase;
let many: TestDatabase;

const moduleId = (n: number) => `mod_batch_${n}`;
const prefix = (n: number) => `Batch${n}`;

/** A tag and an item model, with each kind of value the loader compares. */
function models(n: number): string {
  return `import { Model, fields } from 'fieldforge';
export class ${prefix(n)}Tag extends Model {
  static override fields = { name: fields.Char({ required: true }) };
}
export class ${prefix(n)}Item extends Model {
  static override fields = {
    name: fields.Char({ required: true }),
    size: fields.Integer(),
    spec: fields.Json(),
    tag: fields.ManyToOne('${prefix(n)}Tag'),
    tags: fields.ManyToMany('${prefix(n)}Tag'),
    // Editable computed: a data file may give it (item 0) or leave it to the compute.
    label: fields.Char({ calculate: 'calc_label', store: true, editable: true, depends: ['name'] }),
  };
  calc_label() { return 'About ' + (this as any).name; }
}
`;
}

type Item = Record<string, unknown>;

/** The items come first: they wait for the tags, which the same file declares after them. */
function items(n: number): Item[] {
  return Array.from({ length: n }, (_, i) => ({
    data_type: `${prefix(n)}Item`, identifier: `item_${i}`, name: `Item ${i}`, size: i,
    spec: { rank: i, labels: ['a', 'b'] }, tag: `tag_${i % 3}`, tags: ['tag_0', 'tag_1'],
    ...(i === 0 ? { label: 'Given label' } : {}),
  }));
}

function dataFile(n: number, list: Item[]): string {
  const tags = [0, 1, 2].map((i) => ({ data_type: `${prefix(n)}Tag`, identifier: `tag_${i}`, name: `Tag ${i}` }));
  // JSON is YAML.
  return JSON.stringify([...list, ...tags], null, 1);
}

async function install(t: TestDatabase, n: number, mode: 'init' | 'update') {
  return t.countStatements(() => t.platform.install(t.name, { [mode]: [moduleId(n)] }));
}

/** INSERT/UPDATE/DELETE statements on `tables` (the schema sync's fill of NULL defaults aside). */
function writesTo(statements: string[], tables: readonly string[]): string[] {
  return statements.filter((s) => {
    const m = /^\s*(?:INSERT INTO|UPDATE|DELETE FROM)\s+"([a-z0-9_]+)"/i.exec(s);
    return m !== null && tables.includes(m[1]!) && !/\sIS NULL\s*$/.test(s);
  });
}

/** The item and tag tables and the items' tag links. */
async function tablesOf(t: TestDatabase, n: number): Promise<{ item: string; tag: string; links: string }> {
  const registry = await t.platform.registry(t.name);
  const item = registry.meta(`${prefix(n)}Item`);
  return { item: item.table, tag: registry.meta(`${prefix(n)}Tag`).table, links: (item.fields.get('tags') as ManyToManyField).join.table };
}

function readItem(t: TestDatabase, n: number, item: string, paths: string[]) {
  return t.run(async () => (await new QuerySet(currentEnv().registry.meta(`${prefix(n)}Item`))
    .filter({ identifier: `${moduleId(n)}.${item}` }).read(paths))[0]!);
}

async function itemRows(t: TestDatabase, n: number) {
  const kdb = (await t.platform.database(t.name)).executor;
  const { item: table } = await tablesOf(t, n);
  const { rows } = await sql<{ identifier: string; name: string; size: number; spec: unknown; updated_date: Date }>`
    SELECT identifier, name, size, spec, updated_date FROM ${sql.table(table)} ORDER BY id`.execute(kdb);
  return Object.fromEntries(rows.map((r) => [r.identifier, r]));
}

let fewInstall: Awaited<ReturnType<typeof install>>;
let manyInstall: Awaited<ReturnType<typeof install>>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-mod-batch-'));
  for (const n of [FEW, MANY]) {
    await writeProbeModule(root, moduleId(n), { 'models/index.ts': models(n), 'data/records.yaml': dataFile(n, items(n)) });
  }
  few = await testDatabase('core', [root]);
  many = await testDatabase('core', [root]);
  fewInstall = await install(few, FEW, 'init');
  manyInstall = await install(many, MANY, 'init');
});
afterAll(async () => {
  await few?.close();
  await many?.close();
  await rm(root, { recursive: true, force: true });
});

describe('batched data loading', () => {
  it('loads every record, references resolved, whatever the order in the file', async () => {
    const rows = await itemRows(many, MANY);
    expect(Object.keys(rows)).toHaveLength(MANY);
    expect(rows[`${moduleId(MANY)}.item_7`]).toMatchObject({ name: 'Item 7', size: 7, spec: { rank: 7, labels: ['a', 'b'] } });
    expect(await readItem(many, MANY, 'item_4', ['tag.name', 'tags.name'])).toMatchObject({ tag: { name: 'Tag 1' }, tags: [{ name: 'Tag 0' }, { name: 'Tag 1' }] });
    expect(await readItem(many, MANY, 'item_0', ['label'])).toMatchObject({ label: 'Given label' });
    expect(await readItem(many, MANY, 'item_4', ['label'])).toMatchObject({ label: 'About Item 4' });
  });

  it(`costs the same statements for ${MANY} records as for ${FEW}`, async () => {
    const inserts = async (t: TestDatabase, c: typeof fewInstall, n: number) => {
      const { item, links } = await tablesOf(t, n);
      return [item, links].map((table) => writesTo(c.statements, [table]).length);
    };
    // One INSERT for the items, one for their links.
    expect(await inserts(few, fewInstall, FEW)).toEqual([1, 1]);
    expect(await inserts(many, manyInstall, MANY)).toEqual([1, 1]);
    // One statement per record would add hundreds.
    expect(manyInstall.count, manyInstall.statements.join('\n')).toBe(fewInstall.count);
  });

  it('upgrades without writing anything when the data did not change', async () => {
    const { item, tag, links } = await tablesOf(many, MANY);
    const before = await itemRows(many, MANY);
    const upgrade = await install(many, MANY, 'update');
    expect(writesTo(upgrade.statements, [item, tag, links])).toEqual([]);
    expect(await itemRows(many, MANY)).toEqual(before);
  });

  it('writes exactly the records whose values changed, a JSON value written in another key order being no change', async () => {
    const before = await itemRows(many, MANY);
    const list = items(MANY);
    list[7]!.name = 'Item seven';
    list[8]!.tags = ['tag_2'];
    list[9]!.spec = { rank: 90, labels: ['a', 'b'] };
    list[10]!.spec = { labels: ['a', 'b'], rank: 10 };
    list.push({ data_type: `${prefix(MANY)}Item`, identifier: 'item_new', name: 'New item', tag: 'tag_0', tags: [] });
    await writeFile(join(root, moduleId(MANY), 'data', 'records.yaml'), dataFile(MANY, list));

    const { item } = await tablesOf(many, MANY);
    const upgrade = await install(many, MANY, 'update');
    const writes = writesTo(upgrade.statements, [item]);
    expect(writes.filter((s) => s.startsWith('INSERT'))).toHaveLength(1);
    // Three data writes, and the recompute of item 7's label (it depends on the name).
    expect(writes.filter((s) => s.startsWith('UPDATE'))).toHaveLength(4);
    expect(await readItem(many, MANY, 'item_7', ['label'])).toMatchObject({ label: 'About Item seven' });

    const after = await itemRows(many, MANY);
    const id = (i: number | string) => `${moduleId(MANY)}.item_${i}`;
    expect(after[id(7)]!.name).toBe('Item seven');
    expect(after[id(9)]!.spec).toEqual({ rank: 90, labels: ['a', 'b'] });
    expect(after[id('new')]).toMatchObject({ name: 'New item' });
    const changed = new Set([id(7), id(8), id(9), id('new')]);
    for (const [identifier, row] of Object.entries(after)) {
      if (!changed.has(identifier)) expect(row, identifier).toEqual(before[identifier]);
    }
    expect(after[id(8)]!.updated_date.getTime()).toBeGreaterThan(before[id(8)]!.updated_date.getTime());
    expect((await readItem(many, MANY, 'item_8', ['tags.name'])).tags).toEqual([{ id: expect.any(Number), display_name: 'Tag 2', name: 'Tag 2' }]);
  });

  it('upgrades core, its seed unchanged (thousands of records), without writing a data row', async () => {
    const upgrade = await few.countStatements(() => few.platform.install(few.name, { update: ['core'] }));
    const data = ['country', 'country_state', 'country_group', 'fk_country_group', 'attachment', 'currency', 'language',
      'uom', 'uom_category', 'group', 'model_access', 'ui_view', 'window_action', 'window_action_views_rel', 'ui_menu'];
    expect(writesTo(upgrade.statements, data)).toEqual([]);
    // Reading the seed back is a few statements per data file, not one per record (there are ~4,500).
    expect(upgrade.count).toBeLessThan(400);
  });
});
