/**
 * `WindowAction.modes` is `"List, Form"` or a YAML list (ARCHITECTURE §9; issue 10 §10): a module
 * writing `modes: [List, Form]` installs, and every written form — list, comma string with or
 * without spaces — is stored and read back as `"List, Form"`. An upgrade that re-reads the list
 * finds nothing changed; the API takes both forms too, and refuses anything else naming the field.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const ACTIONS = `
- data_type: WindowAction
  identifier: action_list
  name: As a YAML list
  model: User
  modes: [List, Form]
- data_type: WindowAction
  identifier: action_block_list
  name: As a block list
  model: User
  modes:
    - Form
    - List
- data_type: WindowAction
  identifier: action_tight
  name: Comma string without spaces
  model: User
  modes: List,Form
- data_type: WindowAction
  identifier: action_string
  name: Comma string
  model: User
  modes: List, Form
`;

let t: TestDatabase;
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-modes-'));
  await writeProbeModule(root, 'modes_probe', { 'views/actions.yaml': ACTIONS });
  t = await testDatabase('core', [root]);
});
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function stored(): Promise<Record<string, { modes: string; updated: string }>> {
  const db = (await t.platform.database(t.name)).executor;
  const { rows } = await sql<{ identifier: string; modes: string; updated: Date }>`
    SELECT identifier, modes, updated_date AS updated FROM window_action WHERE identifier LIKE 'modes_probe.%'`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.identifier.replace('modes_probe.', ''), { modes: r.modes, updated: String(r.updated) }]));
}

describe('WindowAction.modes', () => {
  it('installs a module writing modes as a YAML list, storing every form as "List, Form"', async () => {
    const result = await t.platform.install(t.name, { init: ['modes_probe'] });
    expect(result.installed).toEqual(['modes_probe']);
    const rows = await stored();
    expect(Object.fromEntries(Object.entries(rows).map(([id, r]) => [id, r.modes]))).toEqual({
      action_list: 'List, Form', action_block_list: 'Form, List', action_tight: 'List, Form', action_string: 'List, Form',
    });
    const res = await t.api('POST', '/api/query/WindowAction', { fields: ['modes'], filter_str: "Q(identifier='modes_probe.action_list')" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([{ id: expect.any(Number), display_name: 'As a YAML list', modes: 'List, Form' }]);
  });

  it('an upgrade re-reading the list writes nothing: the list equals what is stored', async () => {
    const before = await stored();
    await t.platform.install(t.name, { update: ['modes_probe'] });
    expect(await stored()).toEqual(before);
  });

  it('the API takes both forms and refuses other values, naming the field', async () => {
    const created = await t.api('POST', '/api/create/WindowAction', { name: 'By API', model: 'User', modes: ['Kanban', ' List '] });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().id as number;
    const read = async () => (await t.api('POST', `/api/fetch/WindowAction/${id}`, { fields: ['modes'] })).json().modes;
    expect(await read()).toBe('Kanban, List');
    expect((await t.api('PUT', `/api/update/WindowAction/${id}`, { modes: 'Form ,List' })).statusCode).toBe(200);
    expect(await read()).toBe('Form, List');
    for (const bad of [[1, 2], { List: true }, ['List', null]]) {
      const res = await t.api('PUT', `/api/update/WindowAction/${id}`, { modes: bad });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'ValidationError', detail: expect.stringContaining("field 'modes' of WindowAction") });
    }
    expect(await read()).toBe('Form, List');
  });
});
