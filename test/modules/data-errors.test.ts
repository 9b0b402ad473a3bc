/**
 * Bad YAML data: each case is a data-only module written to a temporary add-on root; installing it
 * must fail with a ModuleError naming the data file and the record, and leave nothing behind.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModuleError } from '../../src/errors.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

/** module id → contents of its one data file (data/records.yaml). */
const CASES: Record<string, string> = {
  mod_err_type: `
- data_type: Group
  identifier: group_fine
  name: Fine
- data_type: NoSuchModel
  identifier: rec_unknown_type
  name: Whatever
`,
  mod_err_field: `
- data_type: Group
  identifier: group_with_typo
  name: Typo
  nmae: Typo
`,
  mod_err_ref: `
- data_type: ModelAccess
  identifier: access_dangling
  name: Dangling
  model: Group
  group: group_nowhere
  read_perm: true
`,
  mod_err_view: `
- data_type: UiView
  identifier: view_bad_field
  name: Groups
  type: List
  model: Group
  arch:
    - field: { name: name }
    - field: { name: no_such_field }
`,
  mod_err_access: `
- data_type: ModelAccess
  identifier: access_unknown_model
  name: Unknown model
  model: NoSuchModel
  group: core.group_user
  read_perm: true
`,
  mod_err_cycle: `
- data_type: UiMenu
  identifier: menu_a
  name: A
  parent: menu_b
- data_type: UiMenu
  identifier: menu_b
  name: B
  parent: menu_a
`,
  mod_err_value: `
- data_type: Group
  identifier: group_fine_1
  name: One
- data_type: Group
  identifier: group_bad_value
  name: [not, a, name]
- data_type: Group
  identifier: group_fine_3
  name: Three
`,
  mod_err_required: `
- data_type: Group
  identifier: group_named
  name: Named
- data_type: Group
  identifier: group_unnamed
  category: nameless
`,
  mod_err_noident: `
- data_type: Group
  name: No identifier
`,
  mod_ok_reordered: `
- data_type: UiMenu
  identifier: menu_child
  name: Child
  parent: menu_parent
- data_type: ModelAccess
  identifier: access_late_group
  name: Late group
  model: Group
  group: group_late
  read_perm: true
- data_type: Group
  identifier: group_late
  name: Late
- data_type: UiMenu
  identifier: menu_parent
  name: Parent
`,
};

let root: string;
let t: TestDatabase;

const dataFile = (mod: string) => join(root, mod, 'data', 'records.yaml');

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-mod-data-'));
  for (const [mod, yaml] of Object.entries(CASES)) {
    await mkdir(join(root, mod, 'data'), { recursive: true });
    await writeFile(join(root, mod, 'manifest.yaml'), `name: ${mod}\nidentifier: ${mod}\ndependencies: [core]\n`);
    await writeFile(dataFile(mod), yaml);
  }
  // Model code errors: a models/index.ts that throws, and a model referring to a model of a
  // module it does not depend on.
  await mkdir(join(root, 'mod_err_code', 'models'), { recursive: true });
  await writeFile(join(root, 'mod_err_code', 'manifest.yaml'), 'name: mod_err_code\nidentifier: mod_err_code\ndependencies: [core]\n');
  await writeFile(join(root, 'mod_err_code', 'models', 'index.ts'), "throw new Error('boom in models');\nexport {};\n");
  await mkdir(join(root, 'mod_err_dep', 'models'), { recursive: true });
  await writeFile(join(root, 'mod_err_dep', 'manifest.yaml'), 'name: mod_err_dep\nidentifier: mod_err_dep\ndependencies: [core]\n');
  await writeFile(join(root, 'mod_err_dep', 'models', 'index.ts'), `import { Model, fields } from 'fieldforge';
export class ModErrDepThing extends Model {
  static override fields = { contact: fields.ManyToOne('Contact') };
}
`);
  t = await testDatabase('core', [root]);
});
afterAll(async () => {
  await t?.close();
  await rm(root, { recursive: true, force: true });
});

async function installError(mod: string): Promise<string> {
  const err = await t.platform.install(t.name, { init: [mod] }).then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ModuleError);
  const message = (err as Error).message;
  expect(message).toContain(dataFile(mod));
  const kdb = (await t.platform.database(t.name)).executor;
  const { rows } = await sql`SELECT identifier FROM module WHERE identifier = ${mod}`.execute(kdb);
  expect(rows).toEqual([]);
  const state = await sql<{ installing: boolean }>`SELECT installing FROM ff_state`.execute(kdb);
  expect(state.rows[0]!.installing).toBe(false);
  return message;
}

describe('data file errors', () => {
  it('rejects an unknown data_type, naming the file and the record', async () => {
    const message = await installError('mod_err_type');
    expect(message).toContain("unknown data_type 'NoSuchModel'");
    expect(message).toContain('record 2');
    expect(message).toContain('rec_unknown_type');
  });

  it('rejects an unknown field, naming the file, the record and the field', async () => {
    const message = await installError('mod_err_field');
    expect(message).toContain('mod_err_field.group_with_typo');
    expect(message).toContain("'nmae'");
  });

  it('rejects a reference to a record that does not exist, naming the qualified identifier', async () => {
    const message = await installError('mod_err_ref');
    expect(message).toContain('mod_err_ref.access_dangling');
    expect(message).toContain("no Group with identifier 'mod_err_ref.group_nowhere'");
  });

  it('rejects a view placing a field its model does not have', async () => {
    const message = await installError('mod_err_view');
    expect(message).toContain('mod_err_view.view_bad_field');
    expect(message).toContain("'no_such_field'");
  });

  it('rejects a ModelAccess naming a model that is not installed', async () => {
    const message = await installError('mod_err_access');
    expect(message).toContain('mod_err_access.access_unknown_model');
    expect(message).toContain("'NoSuchModel'");
  });

  it('rejects records that refer to each other in a cycle', async () => {
    const message = await installError('mod_err_cycle');
    expect(message).toMatch(/mod_err_cycle\.menu_[ab]/);
    expect(message).toContain('cycle');
  });

  it('names the record whose value is invalid, although its file is written in one batch', async () => {
    const message = await installError('mod_err_value');
    expect(message).toContain('record 2 (mod_err_value.group_bad_value)');
    expect(message).toContain("'name'");
  });

  it('names the record that lacks a required value', async () => {
    const message = await installError('mod_err_required');
    expect(message).toContain('record 2 (mod_err_required.group_unnamed)');
    expect(message).toContain('required');
  });

  it('rejects a record without an identifier', async () => {
    const message = await installError('mod_err_noident');
    expect(message).toContain('record 1');
    expect(message).toContain('identifier');
  });

  it('rejects a module whose models/index.ts fails to load, naming the module and the cause', async () => {
    const err = await t.platform.install(t.name, { init: ['mod_err_code'] }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModuleError);
    expect((err as Error).message).toContain("Module 'mod_err_code'");
    expect((err as Error).message).toContain('boom in models');
  });

  it('rejects a model referring to a model of a module it does not depend on', async () => {
    const err = await t.platform.install(t.name, { init: ['mod_err_dep'] }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModuleError);
    expect((err as Error).message).toContain("ModErrDepThing.contact refers to model 'Contact'");
    const kdb = (await t.platform.database(t.name)).executor;
    const { rows } = await sql`SELECT to_regclass('public.mod_err_dep_thing')::text AS t`.execute(kdb);
    expect(rows).toEqual([{ t: null }]);
  });

  it('loads records whose references point later in the file, in any order', async () => {
    await t.platform.install(t.name, { init: ['mod_ok_reordered'] });
    const kdb = (await t.platform.database(t.name)).executor;
    const { rows } = await sql<{ identifier: string; parent: string | null }>`
      SELECT m.identifier, p.identifier AS parent FROM ui_menu m LEFT JOIN ui_menu p ON p.id = m.parent_id
      WHERE m.identifier LIKE 'mod_ok_reordered.%' ORDER BY m.identifier`.execute(kdb);
    expect(rows).toEqual([
      { identifier: 'mod_ok_reordered.menu_child', parent: 'mod_ok_reordered.menu_parent' },
      { identifier: 'mod_ok_reordered.menu_parent', parent: null },
    ]);
    const access = await sql<{ grp: string }>`
      SELECT g.identifier AS grp FROM model_access a JOIN "group" g ON g.id = a.group_id
      WHERE a.identifier = 'mod_ok_reordered.access_late_group'`.execute(kdb);
    expect(access.rows).toEqual([{ grp: 'mod_ok_reordered.group_late' }]);
  });
});
