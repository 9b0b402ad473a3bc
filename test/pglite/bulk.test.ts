/**
 * Selections, bulk calls and clone on embedded PGlite (the suites of `test/http/selections`,
 * `bulk-routes`, `bulk-statements` and `clone` run on the server): the per-record UPDATE (arrays
 * through `unnest`), item refusals from the database's key violations (their detail read on this
 * engine too), a restricted key's selections, and the same statement count for 1, 100 and 1,000
 * records. PGlite's initdb takes seconds, so the file creates ONE database.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { createEngine } from '../../src/db/create-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { createDatabase } from '../../src/platform/database-lifecycle.js';
import { Platform } from '../../src/platform/platform.js';

const DATABASE = 'main';
let dataDir: string;
let platform: Platform;
let app: FastifyInstance;
let adminKey: string;
let userKey: string;
const tags: number[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-pglite-bulk-'));
  const engine = createEngine({ dataDir });
  expect(engine.kind).toBe('pglite');
  platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  await createDatabase(platform, DATABASE, { modules: ['contacts', 'project'], adminPassword: 'pglite-bulk-admin-password' });
  await platform.run(DATABASE, {}, async () => {
    ({ key: adminKey } = await createServiceAccountKey({ name: 'admin', groups: ['core.group_admin', 'core.group_user'] }));
    ({ key: userKey } = await createServiceAccountKey({ name: 'user', groups: ['core.group_user', 'project.group_project_user'] }));
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await RecordRule.create({ name: 'Important tasks', model: 'ProjectTask', filter: "Q(priority__in=['1', '2'])", groups: [projectUser] });
    tags.push(...(await ProjectTag.create_many([{ name: 'pg a' }, { name: 'pg b' }])).map((r) => r.id));
  });
  app = await buildApp(platform);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await platform?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function api(method: 'POST' | 'PUT' | 'DELETE', url: string, body: unknown, key = adminKey) {
  return app.inject({
    method, url, payload: JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, 'x-db-name': DATABASE, 'content-type': 'application/json' },
  });
}
async function ok(method: 'POST' | 'PUT' | 'DELETE', url: string, body: unknown, key = adminKey): Promise<any> {
  const res = await api(method, url, body, key);
  expect(res.statusCode, `${method} ${url}: ${res.body.slice(0, 400)}`).toBe(200);
  return res.json();
}
const run = <T>(fn: () => Promise<T>) => platform.run(DATABASE, {}, fn);

const task = (prefix: string, i: number) => ({
  name: `${prefix} ${i}`, priority: '1', planned_hours: 4, effective_hours: i % 2, tags: [tags[i % 2]], subtasks: [{ name: `${prefix} ${i}.1`, priority: '1' }],
});

describe('bulk calls on PGlite', () => {
  it('bulk-create, per-record bulk-update, selection update, clone and bulk-delete write what they answer', async () => {
    const made = await ok('POST', '/api/bulk-create/ProjectTask', [task('PG', 0), task('PG', 1), task('PG', 2)]);
    expect(made.map((r: any) => r.name)).toEqual(['PG 0', 'PG 1', 'PG 2']);
    const ids = made.map((r: any) => r.id);
    const updated = await ok('PUT', '/api/bulk-update/ProjectTask', [
      { id: ids[2], name: 'PG two', planned_hours: 10 }, { id: ids[0], effective_hours: 3, tags: [tags[1]] },
    ]);
    expect(updated).toEqual({ updated: 2, ids: [ids[2], ids[0]] });
    const rows = await run(() => ProjectTask.query({ id__in: ids }).order_by('id ASC').read(['name', 'remaining_hours', 'subtask_count', 'tags']));
    expect(rows.map((r) => [r.name, r.remaining_hours, r.subtask_count, (r.tags as any[]).map((x) => x.id)])).toEqual([
      ['PG 0', 1, 1, [tags[1]]], ['PG 1', 3, 1, [tags[1]]], ['PG two', 10, 1, [tags[0]]],
    ]);
    const bySelection = await ok('PUT', '/api/bulk-update/ProjectTask', { selection: { filter_str: "Q(name__startswith='PG') & Q(parent=None)" }, vals: { sequence: 7 } });
    expect(bySelection.ids.sort()).toEqual([...ids].sort());
    const copies = await ok('POST', '/api/clone/ProjectTask', { ids: [ids[1], ids[0]] });
    expect(copies.map((r: any) => r.name)).toEqual(['PG 1 (copy)', 'PG 0 (copy)']);
    expect(await run(() => ProjectTask.query({ parent: copies[0].id }).read(['name']))).toMatchObject([{ name: 'PG 1.1' }]);
    const deleted = await ok('DELETE', '/api/bulk-delete/ProjectTask', { filter_str: "Q(name__endswith='(copy)')" });
    expect(deleted.deleted).toBe(2);
    expect(await run(() => ProjectTask.query({ parent__in: copies.map((c: any) => c.id) }).count())).toBe(0);
  });

  it('names the item of a unique violation the database reports, and of a bad value, writing nothing', async () => {
    const count = () => run(() => ProjectTag.query().count());
    const before = await count();
    const stored = await api('POST', '/api/bulk-create/ProjectTag', [{ name: 'pg new' }, { name: 'pg a' }]);
    expect(stored.statusCode, stored.body).toBe(400);
    expect(stored.json().detail).toMatch(/^item 1: .*'name' must be unique/);
    // Checked by the database: `pg a` is held by a record that keeps it.
    const renamed = await api('PUT', '/api/bulk-update/ProjectTag', [{ id: tags[0], color: 2 }, { id: tags[1], name: 'pg a' }]);
    expect(renamed.statusCode, renamed.body).toBe(400);
    expect(renamed.json().detail).toMatch(/^item 1: .*'name' must be unique/);
    const bad = await api('PUT', '/api/bulk-update/ProjectTask', [{ id: 1, priority: '9' }]);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/^item 0: /);
    expect(await count()).toBe(before);
  });

  it('a restricted key\'s selection matches what its /api/query lists; a hidden id is a 404', async () => {
    const [hidden] = await run(async () => (await ProjectTask.create_many([{ name: 'PGR normal', priority: '0' }, { name: 'PGR urgent', priority: '2' }])).map((r) => r.id));
    const listed = await ok('POST', '/api/query/ProjectTask', { fields: ['id'], filter_str: "Q(name__startswith='PGR')" }, userKey);
    const selected = await ok('PUT', '/api/bulk-update/ProjectTask', { selection: { filter_str: "Q(name__startswith='PGR')" }, vals: { description: 'seen' } }, userKey);
    expect(selected.ids).toEqual(listed.map((r: any) => r.id));
    expect(selected.ids).toHaveLength(1);
    const refused = await api('PUT', '/api/bulk-update/ProjectTask', { selection: { ids: [hidden] }, vals: { description: 'x' } }, userKey);
    expect(refused.statusCode).toBe(404);
    expect((await api('PUT', '/api/bulk-update/ProjectTask', { selection: {}, vals: {} }, userKey)).statusCode).toBe(400);
  });

  it('costs the same number of statements for 1, 100 and 1,000 records', async () => {
    const database = await platform.database(DATABASE);
    const count = async (fn: () => Promise<unknown>) => {
      let n = 0;
      const off = database.onStatement(() => n++);
      try {
        await fn();
      } finally {
        off();
      }
      return n;
    };
    const counts: Record<string, number[]> = { create: [], update: [], clone: [], delete: [] };
    await ok('POST', '/api/bulk-create/ProjectTask', [task('warm', 0)]);
    for (const n of [1, 100, 1000]) {
      let ids: number[] = [];
      counts.create!.push(await count(async () => {
        ids = (await ok('POST', '/api/bulk-create/ProjectTask', Array.from({ length: n }, (_, i) => task(`S${n}`, i)))).map((r: any) => r.id);
      }));
      counts.update!.push(await count(() => ok('PUT', '/api/bulk-update/ProjectTask', ids.map((id, i) => ({ id, planned_hours: i, tags: [tags[i % 2]] })))));
      counts.clone!.push(await count(() => ok('POST', '/api/clone/ProjectTask', { ids })));
      counts.delete!.push(await count(() => ok('DELETE', '/api/bulk-delete/ProjectTask', ids)));
    }
    console.log('PGlite statements at 1 / 100 / 1000 records:', JSON.stringify(counts));
    for (const list of Object.values(counts)) expect(list).toEqual([list[0], list[0], list[0]]);
  }, 120_000);
});
