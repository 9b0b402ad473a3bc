/**
 * Installing modules: schema sync (tables, columns, NOT NULL, indexes, foreign keys, unique
 * together, join tables), YAML data of every type with qualified and forward references, module
 * rows, the `installing` flag, all-or-nothing rollback and per-database registries.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { sql, type SqlFragment } from '../../src/db/sql-fragment.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModuleError } from '../../src/errors.js';
import { loadModuleCode } from '../../src/modules/module-code.js';
import { currentEnv } from '../../src/orm/env.js';
import { createRecords } from '../../src/orm/write/create-records.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const MODULES = fileURLToPath(new URL('../fixtures/modules/', import.meta.url));

let t: TestDatabase;
/** A second database of the same process (same platform) where mod_base is NOT installed. */
let other: TestDatabase;
let kdb: SqlExecutor;

async function rows<T>(query: SqlFragment<T>, db: SqlExecutor = kdb): Promise<T[]> {
  return (await query.execute(db)).rows;
}

async function idOf(table: string, identifier: string): Promise<number> {
  const [row] = await rows(sql<{ id: number }>`SELECT id FROM ${sql.table(table)} WHERE identifier = ${identifier}`);
  if (!row) throw new Error(`no ${table} '${identifier}'`);
  return row.id;
}

async function tableExists(table: string, db: SqlExecutor = kdb): Promise<boolean> {
  const [row] = await rows(sql<{ t: string | null }>`SELECT to_regclass(${`public.${table}`})::text AS t`, db);
  return row!.t !== null;
}

async function columns(table: string): Promise<Record<string, { type: string; nullable: boolean }>> {
  const list = await rows(sql<{ column_name: string; data_type: string; is_nullable: string }>`
    SELECT column_name, data_type, is_nullable FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name = ${table}`);
  return Object.fromEntries(list.map((c) => [c.column_name, { type: c.data_type, nullable: c.is_nullable === 'YES' }]));
}

/** Index definitions of `table`: `{columns, unique}` with columns in index order. */
async function indexes(table: string): Promise<{ columns: string[]; unique: boolean; primary: boolean }[]> {
  const list = await rows(sql<{ cols: string[]; unique: boolean; primary: boolean }>`
    SELECT array_agg(a.attname::text ORDER BY k.n) AS cols, ix.indisunique AS unique, ix.indisprimary AS primary
    FROM pg_index ix
    JOIN pg_class t ON t.oid = ix.indrelid
    CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n)
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
    WHERE t.relname = ${table} AND t.relnamespace = 'public'::regnamespace
    GROUP BY ix.indexrelid, ix.indisunique, ix.indisprimary`);
  return list.map((r) => ({ columns: r.cols, unique: r.unique, primary: r.primary }));
}

/** Foreign keys of `table`: column → {target table, on-delete code}. */
async function foreignKeys(table: string): Promise<Record<string, { target: string; onDelete: string }>> {
  const list = await rows(sql<{ col: string; target: string; confdeltype: string }>`
    SELECT a.attname::text AS col, c.confrelid::regclass::text AS target, c.confdeltype::text AS confdeltype
    FROM pg_constraint c
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    WHERE c.contype = 'f' AND c.conrelid = ${`public.${table}`}::regclass`);
  return Object.fromEntries(list.map((r) => [r.col, { target: r.target.replace(/^"|"$/g, ''), onDelete: r.confdeltype }]));
}

async function platformState(db: SqlExecutor = kdb): Promise<{ installing: boolean; registry_version: number }> {
  const [row] = await rows(sql<{ installing: boolean; registry_version: number }>`SELECT installing, registry_version FROM ff_state WHERE id = 1`, db);
  return row!;
}

beforeAll(async () => {
  [t, other] = await Promise.all([testDatabase('core', [MODULES]), testDatabase('core', [MODULES])]);
  kdb = (await t.platform.database(t.name)).executor;
  const result = await t.platform.install(t.name, { init: ['mod_ext'] });
  expect(result.installed).toEqual(['mod_base', 'mod_ext']);
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

describe('schema sync on install', () => {
  it('creates a table per registered model, with the declared columns and NOT NULL for required fields', async () => {
    for (const table of ['mod_base_category', 'mod_base_tag', 'mod_base_item', 'mod_base_member', 'mod_ext_note']) {
      expect(await tableExists(table), table).toBe(true);
    }
    const cols = await columns('mod_base_item');
    expect(cols.name).toEqual({ type: 'character varying', nullable: false });
    expect(cols.code).toEqual({ type: 'character varying', nullable: true });
    expect(cols.notes).toEqual({ type: 'text', nullable: true });
    expect(cols.quantity?.type).toBe('integer');
    for (const fk of ['category_id', 'owner_id', 'parent_id']) expect(cols[fk], fk).toEqual({ type: 'integer', nullable: true });
    // Generic fields every model has.
    for (const generic of ['id', 'identifier', 'created_date', 'updated_date']) expect(cols[generic], generic).toBeDefined();
    // To-many fields have no column.
    expect(cols.tags).toBeUndefined();
    expect(cols.members).toBeUndefined();
    const member = await columns('mod_base_member');
    expect(member.item_id?.nullable).toBe(false);
    expect(member.user_id?.nullable).toBe(false);
    expect(member.role?.nullable).toBe(true);
  });

  it('indexes fields declared with index: true and every foreign key column', async () => {
    const list = await indexes('mod_base_item');
    const plain = list.filter((i) => !i.unique).map((i) => i.columns.join(','));
    expect(plain).toEqual(expect.arrayContaining(['code', 'category_id', 'owner_id', 'parent_id']));
    expect(plain).not.toContain('notes');
    expect(plain).not.toContain('name');
    expect((await indexes('mod_ext_note')).map((i) => i.columns.join(','))).toContain('item_id');
  });

  it('creates a unique index for _unique_together and for the identifier', async () => {
    const unique = (await indexes('mod_base_item')).filter((i) => i.unique && !i.primary).map((i) => i.columns.join(','));
    expect(unique).toEqual(expect.arrayContaining(['name,category_id', 'identifier']));
    const categoryId = await idOf('mod_base_category', 'mod_base.cat_main');
    await expect(sql`INSERT INTO mod_base_item (name, category_id) VALUES ('One', ${categoryId})`.execute(kdb)).rejects.toThrow(/unique/i);
  });

  it('creates foreign keys with the declared on_delete', async () => {
    expect(await foreignKeys('mod_base_item')).toMatchObject({
      category_id: { target: 'mod_base_category', onDelete: 'c' },
      owner_id: { target: 'user', onDelete: 'n' },
      parent_id: { target: 'mod_base_item', onDelete: 'r' },
    });
    expect(await foreignKeys('mod_base_member')).toMatchObject({
      item_id: { target: 'mod_base_item', onDelete: 'c' },
      user_id: { target: 'user', onDelete: 'c' },
    });
    expect(await foreignKeys('mod_ext_note')).toMatchObject({ item_id: { target: 'mod_base_item', onDelete: 'c' } });
  });

  it('creates the join table of a ManyToMany, and none for one declared with a through model', async () => {
    const cols = await columns('mod_base_item_tags_rel');
    expect(Object.keys(cols).sort()).toEqual(['mod_base_item_id', 'mod_base_tag_id']);
    expect(cols.mod_base_item_id!.nullable).toBe(false);
    const pk = (await indexes('mod_base_item_tags_rel')).find((i) => i.primary);
    expect(pk?.columns).toEqual(['mod_base_item_id', 'mod_base_tag_id']);
    expect(await foreignKeys('mod_base_item_tags_rel')).toEqual({
      mod_base_item_id: { target: 'mod_base_item', onDelete: 'c' },
      mod_base_tag_id: { target: 'mod_base_tag', onDelete: 'c' },
    });
    const rels = await rows(sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'mod_base_item_members%'`);
    expect(rels).toEqual([]);
  });

  it('stores the links of a through-model ManyToMany as rows of that model', async () => {
    const [userId] = (await rows(sql<{ id: number }>`SELECT id FROM "user" ORDER BY id LIMIT 1`)).map((r) => r.id);
    const itemId = await t.run(async () => {
      const [item] = await createRecords(currentEnv().registry.meta('ModBaseItem'), [{ name: 'With members', members: [userId] }]);
      return item!.id;
    });
    expect(await rows(sql`SELECT item_id, user_id FROM mod_base_member WHERE item_id = ${itemId}`)).toEqual([{ item_id: itemId, user_id: userId }]);
    const res = await t.api('POST', `/api/fetch/ModBaseItem/${itemId}`, { fields: ['members.name'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().members).toEqual([expect.objectContaining({ id: userId })]);
  });

  it('records each installed module in the Module model', async () => {
    const mods = await rows(sql<{ identifier: string; name: string; state: string; dependencies: unknown; installed_date: unknown }>`
      SELECT identifier, name, state, dependencies, installed_date FROM module WHERE identifier LIKE 'mod_%' ORDER BY identifier`);
    expect(mods).toEqual([
      expect.objectContaining({ identifier: 'mod_base', name: 'Mod Base', state: 'installed', dependencies: ['core'] }),
      expect.objectContaining({ identifier: 'mod_ext', name: 'Mod Ext', state: 'installed', dependencies: ['core', 'mod_base'] }),
    ]);
    expect(mods.every((m) => m.installed_date !== null)).toBe(true);
    const res = await t.api('POST', '/api/query/Module', { fields: ['identifier', 'state'], filter_str: "Q(identifier='mod_base')" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([expect.objectContaining({ identifier: 'mod_base', state: 'installed' })]);
  });
});

describe('YAML data', () => {
  it('loads Group and ModelAccess records with identifiers qualified by the module', async () => {
    const groupX = await idOf('group', 'mod_base.group_x');
    expect(await rows(sql`SELECT name, category FROM "group" WHERE id = ${groupX}`)).toEqual([{ name: 'Mod Base Users', category: 'testing' }]);
    expect(await rows(sql`SELECT id FROM "group" WHERE identifier = 'group_x'`)).toEqual([]);
    const access = await rows(sql<Record<string, unknown>>`
      SELECT identifier, model, group_id, read_perm, write_perm, create_perm, delete_perm FROM model_access
      WHERE identifier LIKE 'mod_base.%' ORDER BY identifier`);
    expect(access).toEqual([
      { identifier: 'mod_base.access_item_admin', model: 'ModBaseItem', group_id: await idOf('group', 'core.group_admin'), read_perm: true, write_perm: true, create_perm: true, delete_perm: true },
      { identifier: 'mod_base.access_item_x', model: 'ModBaseItem', group_id: groupX, read_perm: true, write_perm: true, create_perm: false, delete_perm: false },
    ]);
  });

  it('loads UiView, WindowAction and UiMenu records, menus referring to later records and to other modules', async () => {
    const [list] = await rows(sql<{ type: string; model: string; arch: unknown }>`SELECT type, model, arch FROM ui_view WHERE identifier = 'mod_base.view_item_list'`);
    expect(list).toEqual({
      type: 'List', model: 'ModBaseItem',
      arch: [{ field: { name: 'name' } }, { field: { name: 'code' } }, { field: { name: 'category', properties: { widget: 'badge' } } }],
    });
    const [form] = await rows(sql<{ type: string; arch: any }>`SELECT type, arch FROM ui_view WHERE identifier = 'mod_base.view_item_form'`);
    expect(form!.type).toBe('Form');
    expect(form!.arch[0].row[0].column.span).toBe(6);
    const actionId = await idOf('window_action', 'mod_base.action_items');
    expect(await rows(sql`SELECT name, model, modes, default_view FROM window_action WHERE id = ${actionId}`))
      .toEqual([{ name: 'Items', model: 'ModBaseItem', modes: 'List, Form', default_view: 'List' }]);
    const views = await rows(sql<{ ui_view_id: number }>`SELECT ui_view_id FROM window_action_views_rel WHERE window_action_id = ${actionId} ORDER BY ui_view_id`);
    expect(views.map((v) => v.ui_view_id).sort()).toEqual([await idOf('ui_view', 'mod_base.view_item_list'), await idOf('ui_view', 'mod_base.view_item_form')].sort());
    // menu_items comes BEFORE menu_root in the file: file order does not matter.
    const [items] = await rows(sql<{ parent_id: number; action_id: number; sequence: number }>`SELECT parent_id, action_id, sequence FROM ui_menu WHERE identifier = 'mod_base.menu_items'`);
    expect(items).toEqual({ parent_id: await idOf('ui_menu', 'mod_base.menu_root'), action_id: actionId, sequence: 10 });
    const [settings] = await rows(sql<{ parent_id: number }>`SELECT parent_id FROM ui_menu WHERE identifier = 'mod_base.menu_base_settings'`);
    expect(settings!.parent_id).toBe(await idOf('ui_menu', 'core.menu_settings'));
  });

  it('loads plain model records, resolving references to later records and to records of later files', async () => {
    const [one] = await rows(sql<Record<string, unknown>>`SELECT id, name, code, category_id, parent_id FROM mod_base_item WHERE identifier = 'mod_base.item_one'`);
    expect(one).toMatchObject({
      name: 'One', code: 'I-1',
      category_id: await idOf('mod_base_category', 'mod_base.cat_main'),
      parent_id: await idOf('mod_base_item', 'mod_base.item_two'),
    });
    expect(await rows(sql`SELECT mod_base_tag_id FROM mod_base_item_tags_rel WHERE mod_base_item_id = ${one!.id}`))
      .toEqual([{ mod_base_tag_id: await idOf('mod_base_tag', 'mod_base.tag_red') }]);
  });

  it('resolves references across modules written in the qualified form', async () => {
    const [access] = await rows(sql<{ group_id: number; model: string }>`SELECT group_id, model FROM model_access WHERE identifier = 'mod_ext.access_note_x'`);
    expect(access).toEqual({ group_id: await idOf('group', 'mod_base.group_x'), model: 'ModExtNote' });
    const [menu] = await rows(sql<{ parent_id: number }>`SELECT parent_id FROM ui_menu WHERE identifier = 'mod_ext.menu_notes'`);
    expect(menu!.parent_id).toBe(await idOf('ui_menu', 'mod_base.menu_root'));
    const [note] = await rows(sql<{ item_id: number }>`SELECT item_id FROM mod_ext_note WHERE identifier = 'mod_ext.note_first'`);
    expect(note!.item_id).toBe(await idOf('mod_base_item', 'mod_base.item_one'));
  });
});

describe('model registration', () => {
  it('registers only the model files exported from models/index.ts', async () => {
    const registry = await t.platform.registry(t.name);
    expect(registry.has('ModBaseItem')).toBe(true);
    expect(registry.has('ModBaseMember')).toBe(true);
    expect(registry.has('ModBaseGhost')).toBe(false);
    // The file exists and declares a model class, yet it is neither loaded nor synced.
    const code = await loadModuleCode(t.platform.catalog.get('mod_base'));
    expect(code.declarations.map((c) => c.name).sort()).toEqual(['ModBaseCategory', 'ModBaseItem', 'ModBaseMember', 'ModBaseTag']);
    expect(await tableExists('mod_base_ghost')).toBe(false);
    const res = await t.api('POST', '/api/query/ModBaseGhost', {});
    expect(res.statusCode).toBe(404);
  });

  it('serves a module model only in the databases where that module is installed', async () => {
    const here = await t.platform.registry(t.name);
    const there = await t.platform.registry(other.name);
    expect(here.has('ModBaseItem')).toBe(true);
    expect(there.has('ModBaseItem')).toBe(false);
    expect(there.has('ModExtNote')).toBe(false);
    expect(there.has('User')).toBe(true);
    const ok = await t.api('POST', '/api/query/ModBaseItem', { fields: ['name'], filter_str: "Q(name='Two')" });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual([expect.objectContaining({ name: 'Two' })]);
    // The same app, the same credential, the other database: the model does not exist there.
    const missing = await t.api('POST', '/api/query/ModBaseItem', { fields: ['name'] }, { 'x-db-name': other.name });
    expect(missing.statusCode, missing.body).toBe(404);
    expect(missing.json().detail).toContain('ModBaseItem');
  });
});

describe('installing flag and rollback', () => {
  it('sets the installing flag, visible from another connection, while installing, and clears it afterwards', async () => {
    const before = await platformState();
    expect(before.installing).toBe(false);
    await t.platform.install(t.name, { init: ['mod_probe'] });
    const [probe] = await rows(sql<{ saw_installing: boolean }>`SELECT saw_installing FROM mod_probe WHERE identifier = 'mod_probe.probe_one'`);
    expect(probe!.saw_installing).toBe(true);
    const after = await platformState();
    expect(after.installing).toBe(false);
    expect(after.registry_version).toBe(before.registry_version + 1);
  });

  it('answers 503 with Retry-After while the flag is set', async () => {
    await sql`UPDATE ff_state SET installing = true WHERE id = 1`.execute(kdb);
    try {
      const res = await t.api('POST', '/api/query/ModBaseItem', {});
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      await sql`UPDATE ff_state SET installing = false WHERE id = 1`.execute(kdb);
    }
  });

  it('rolls everything back when a data file fails: no new table, no module row, flag cleared', async () => {
    const odb = (await other.platform.database(other.name)).executor;
    const before = await platformState(odb);
    const err = await other.platform.install(other.name, { init: ['mod_base', 'mod_badref'] }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModuleError);
    const message = (err as Error).message;
    expect(message).toContain(join(MODULES, 'mod_badref', 'data', 'things.yaml'));
    expect(message).toContain('mod_badref.thing_broken');
    expect(message).toContain('core.group_that_does_not_exist');
    for (const table of ['mod_badref_thing', 'mod_base_item', 'mod_base_item_tags_rel']) expect(await tableExists(table, odb), table).toBe(false);
    expect(await rows(sql`SELECT identifier FROM module WHERE identifier IN ('mod_base', 'mod_badref')`, odb)).toEqual([]);
    expect(await rows(sql`SELECT id FROM "group" WHERE identifier LIKE 'mod_base.%'`, odb)).toEqual([]);
    const after = await platformState(odb);
    expect(after).toEqual({ installing: false, registry_version: before.registry_version });
    // The database still works and still lacks the modules.
    expect((await other.platform.registry(other.name)).has('ModBaseItem')).toBe(false);
    const res = await other.api('POST', '/api/query/Group', { fields: ['identifier'], filter_str: "Q(identifier='core.group_admin')" });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses to upgrade a module that is not installed', async () => {
    await expect(other.platform.install(other.name, { update: ['mod_base'] })).rejects.toThrow(/'mod_base' is not installed/);
    expect((await platformState((await other.platform.database(other.name)).executor)).installing).toBe(false);
  });
});
