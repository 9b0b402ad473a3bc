/**
 * Upgrading a module (`update`): version 1 of `mod_up` is installed from one add-on root, then a
 * platform whose catalog holds version 2 (another root) upgrades it — new columns, indexes, a new
 * model, and data upserted by identifier.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { sql } from '../../src/db/sql-fragment.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const V1 = join(FIXTURES, 'addons-upgrade-v1');
const V2 = join(FIXTURES, 'addons-upgrade-v2');

let t: TestDatabase;
let v2: Platform;
let kdb: SqlExecutor;

interface Thing {
  id: number;
  identifier: string;
  name: string;
  size: number | null;
}

async function things(): Promise<Record<string, Thing & Record<string, unknown>>> {
  const { rows } = await sql<Thing & Record<string, unknown>>`SELECT * FROM mod_up_thing ORDER BY id`.execute(kdb);
  return Object.fromEntries(rows.map((r) => [r.identifier, r]));
}

async function columnNames(table: string): Promise<string[]> {
  const { rows } = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ${table}`.execute(kdb);
  return rows.map((r) => r.column_name).sort();
}

async function indexedColumns(table: string): Promise<string[]> {
  const { rows } = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = ${table}`.execute(kdb);
  return rows.map((r) => /\((.*)\)$/.exec(r.indexdef)![1]!);
}

let v1Things: Awaited<ReturnType<typeof things>>;
let v1Module: { installed_date: Date; updated_module_date: Date; name: string };

beforeAll(async () => {
  t = await testDatabase('core', [V1]);
  kdb = (await t.platform.database(t.name)).executor;
  await t.platform.install(t.name, { init: ['mod_up'] });
  v1Things = await things();
  v1Module = (await sql<typeof v1Module>`SELECT name, installed_date, updated_module_date FROM module WHERE identifier = 'mod_up'`.execute(kdb)).rows[0]!;
  v2 = new Platform(t.engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR, V2]));
});
afterAll(async () => {
  await t?.close();
});

describe('module upgrade', () => {
  it('installs version 1 as declared', async () => {
    expect(Object.keys(v1Things).sort()).toEqual(['mod_up.thing_changed', 'mod_up.thing_same']);
    expect(await columnNames('mod_up_thing')).not.toContain('label');
    expect(v1Module.name).toBe('Mod Up v1');
  });

  it('adds the new columns, indexes, foreign keys and models of the new version', async () => {
    const result = await v2.install(t.name, { update: ['mod_up'] });
    expect(result.installed).toEqual([]);
    expect(result.updated).toEqual(['mod_up']);
    expect(await columnNames('mod_up_thing')).toEqual(expect.arrayContaining(['label', 'weight', 'kind_id', 'name', 'size']));
    expect(await columnNames('mod_up_kind')).toContain('name');
    // A required column added with a default: existing rows get the default, then NOT NULL holds.
    const { rows: [weight] } = await sql<{ is_nullable: string }>`
      SELECT is_nullable FROM information_schema.columns WHERE table_name = 'mod_up_thing' AND column_name = 'weight'`.execute(kdb);
    expect(weight!.is_nullable).toBe('NO');
    expect(result.warnings).toEqual([]);
    const indexed = await indexedColumns('mod_up_thing');
    expect(indexed).toEqual(expect.arrayContaining(['label', 'kind_id']));
    const { rows } = await sql<{ confdeltype: string; target: string }>`
      SELECT confdeltype::text AS confdeltype, confrelid::regclass::text AS target FROM pg_constraint
      WHERE contype = 'f' AND conrelid = 'public.mod_up_thing'::regclass AND conname LIKE '%kind_id%'`.execute(kdb);
    expect(rows).toEqual([{ confdeltype: 'r', target: 'mod_up_kind' }]);
    expect((await v2.registry(t.name)).has('ModUpKind')).toBe(true);
  });

  it('upserts the data by identifier: changed records updated in place, unchanged ones keep their id, nothing duplicated', async () => {
    const now = await things();
    expect(Object.keys(now).sort()).toEqual(['mod_up.thing_changed', 'mod_up.thing_new', 'mod_up.thing_same']);
    const same = now['mod_up.thing_same']!;
    const changed = now['mod_up.thing_changed']!;
    expect(same.id).toBe(v1Things['mod_up.thing_same']!.id);
    expect(same).toMatchObject({ name: 'Unchanged', size: 1 });
    expect(changed.id).toBe(v1Things['mod_up.thing_changed']!.id);
    const { rows: [kind] } = await sql<{ id: number }>`SELECT id FROM mod_up_kind WHERE identifier = 'mod_up.kind_big'`.execute(kdb);
    // kind_big is declared after thing_changed in the file.
    expect(changed).toMatchObject({ name: 'After', size: 20, label: 'changed', kind_id: kind!.id });
    // A column added with a default gets it on the rows that existed before the upgrade.
    expect(same.weight).toBe(7);
  });

  it('updates the Module row, keeping the installation date', async () => {
    const { rows: [mod] } = await sql<typeof v1Module & { state: string }>`
      SELECT name, state, installed_date, updated_module_date FROM module WHERE identifier = 'mod_up'`.execute(kdb);
    expect(mod!.name).toBe('Mod Up v2');
    expect(mod!.state).toBe('installed');
    expect(new Date(mod!.installed_date).getTime()).toBe(new Date(v1Module.installed_date).getTime());
    expect(new Date(mod!.updated_module_date).getTime()).toBeGreaterThan(new Date(v1Module.updated_module_date).getTime());
  });

  it('is idempotent: upgrading again changes nothing', async () => {
    const before = await things();
    await v2.install(t.name, { update: ['mod_up'] });
    const after = await things();
    expect(Object.keys(after)).toEqual(Object.keys(before));
    for (const [identifier, rec] of Object.entries(before)) expect(after[identifier]!.id).toBe(rec.id);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM mod_up_kind`.execute(kdb);
    expect(rows[0]!.n).toBe(1);
  });
});

describe('data-only upgrade of a module rewritten in place', () => {
  let root: string;
  let u: TestDatabase;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ff-mod-upgrade-'));
    await mkdir(join(root, 'mod_tmp', 'data'), { recursive: true });
    await writeFile(join(root, 'mod_tmp', 'manifest.yaml'), 'name: Tmp\nidentifier: mod_tmp\ndependencies: [core]\n');
    await writeFile(join(root, 'mod_tmp', 'data', 'groups.yaml'), `
- data_type: Group
  identifier: group_kept
  name: Kept
  category: before
- data_type: Group
  identifier: group_renamed
  name: Old name
`);
    u = await testDatabase('core', [root]);
  });
  afterAll(async () => {
    await u?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('updates the records whose file changed and never duplicates them', async () => {
    const db = (await u.platform.database(u.name)).executor;
    const groups = async () => Object.fromEntries((await sql<{ id: number; identifier: string; name: string; category: string | null }>`
      SELECT id, identifier, name, category FROM "group" WHERE identifier LIKE 'mod_tmp.%'`.execute(db)).rows.map((r) => [r.identifier, r]));
    await u.platform.install(u.name, { init: ['mod_tmp'] });
    const before = await groups();
    await writeFile(join(root, 'mod_tmp', 'data', 'groups.yaml'), `
- data_type: Group
  identifier: group_renamed
  name: New name
- data_type: Group
  identifier: group_kept
  name: Kept
  category: before
- data_type: Group
  identifier: group_added
  name: Added
`);
    const result = await u.platform.install(u.name, { update: ['mod_tmp'] });
    expect(result.updated).toEqual(['mod_tmp']);
    const after = await groups();
    expect(Object.keys(after).sort()).toEqual(['mod_tmp.group_added', 'mod_tmp.group_kept', 'mod_tmp.group_renamed']);
    expect(after['mod_tmp.group_kept']).toEqual(before['mod_tmp.group_kept']);
    expect(after['mod_tmp.group_renamed']).toEqual({ ...before['mod_tmp.group_renamed'], name: 'New name' });
  });
});
