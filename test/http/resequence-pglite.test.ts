/**
 * Resequence on embedded PGlite (the full suite, `resequence.test.ts`, runs on the server): order
 * and first place, scope_filter, NULL numbers and ties, one UPDATE whatever the number of rows,
 * and a restricted key's 403/404 with nothing written. PGlite's initdb takes seconds, so the file
 * creates ONE database.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
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

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-pglite-reseq-'));
  const engine = createEngine({ dataDir });
  expect(engine.kind).toBe('pglite');
  platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  await createDatabase(platform, DATABASE, { modules: ['contacts', 'project'], adminPassword: 'pglite-reseq-admin-password' });
  await platform.run(DATABASE, {}, async () => {
    ({ key: adminKey } = await createServiceAccountKey({ name: 'admin', groups: ['core.group_admin', 'core.group_user'] }));
    ({ key: userKey } = await createServiceAccountKey({ name: 'user', groups: ['core.group_user', 'project.group_project_user'] }));
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await RecordRule.create_many([
      { name: 'Important tasks', model: 'ProjectTask', filter: "Q(priority__in=['1', '2'])", groups: [projectUser] },
      { name: 'Shared tasks (read)', model: 'ProjectTask', filter: "Q(name__startswith='Shared')", groups: [projectUser], perm_write: false, perm_create: false, perm_delete: false },
    ]);
  });
  app = await buildApp(platform);
}, 180_000);
afterAll(async () => {
  await app?.close();
  await platform?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const run = <T>(fn: () => Promise<T>) => platform.run(DATABASE, {}, fn);
function reseq(body: unknown, key = adminKey) {
  return app.inject({
    method: 'POST', url: '/api/resequence/ProjectTask', payload: JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, 'x-db-name': DATABASE, 'content-type': 'application/json' },
  });
}
async function ok(body: unknown, key = adminKey): Promise<number[]> {
  const res = await reseq(body, key);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().ids;
}
async function project(name: string, specs: readonly { name: string; sequence: number | null; priority?: string }[]) {
  return run(async () => {
    const id = (await ProjectProject.create({ name })).id;
    const ids = (await ProjectTask.create_many(specs.map((s) => ({ priority: '1', ...s, project: id })))).map((r) => r.id);
    const unnumbered = ids.filter((_, i) => specs[i]!.sequence === null);
    if (unnumbered.length) await ProjectTask.query({ id__in: unnumbered }).update({ sequence: null });
    return { id, ids, scope: `Q(project=${id})` };
  });
}
const numbers = (projectId: number) => run(async () =>
  (await ProjectTask.query({ project: projectId }).read(['sequence'])).map((r) => [r.id, r.sequence]));

describe('resequence on PGlite', () => {
  it('places the dropped record after its anchor, or first; renumbers 1..N', async () => {
    const p = await project('PG order', [1, 2, 3, 4].map((n) => ({ name: `O${n}`, sequence: n })));
    const [a, b, c, d] = p.ids as [number, number, number, number];
    expect(await ok({ dropped_column_id: a, after_column_id: c, scope_filter: p.scope })).toEqual([b, c, a, d]);
    expect(await ok({ dropped_column_id: d, after_column_id: null, scope_filter: p.scope })).toEqual([d, b, c, a]);
    expect(await numbers(p.id)).toEqual([[d, 1], [b, 2], [c, 3], [a, 4]]);
  });

  it('NULL numbers come after numbered rows, ties by id; rows outside the scope keep theirs', async () => {
    const p = await project('PG nulls', [{ name: 'Z1', sequence: null }, { name: 'T1', sequence: 4 }, { name: 'T2', sequence: 4 }, { name: 'Z2', sequence: null }]);
    const other = await project('PG untouched', [{ name: 'U1', sequence: 9 }]);
    const [z1, t1, t2, z2] = p.ids as [number, number, number, number];
    expect(await ok({ dropped_column_id: z2, after_column_id: t1, scope_filter: p.scope })).toEqual([t1, z2, t2, z1]);
    expect(await numbers(p.id)).toEqual([[t1, 1], [z2, 2], [t2, 3], [z1, 4]]);
    expect(await numbers(other.id)).toEqual([[other.ids[0], 9]]);
  });

  it('costs one UPDATE for 100 and for 1,000 rows', async () => {
    const database = await platform.database(DATABASE);
    const counts: number[] = [];
    for (const n of [100, 1000]) {
      const p = await project(`PG count ${n}`, Array.from({ length: n }, (_, i) => ({ name: `C${i}`, sequence: i + 1 })));
      const statements: string[] = [];
      const off = database.onStatement((s) => statements.push(s));
      try {
        expect((await ok({ dropped_column_id: p.ids[0], after_column_id: p.ids[n - 1], scope_filter: p.scope })).at(-1)).toBe(p.ids[0]);
      } finally {
        off();
      }
      expect(statements.filter((s) => /^\s*update\b/i.test(s))).toHaveLength(1);
      counts.push(statements.length);
      expect((await numbers(p.id)).map(([, seq]) => seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    }
    expect(counts[0]).toBe(counts[1]);
  }, 120_000);

  it('a restricted key: 403 for a row it may not change, 404 for one it cannot see, nothing written', async () => {
    const p = await project('PG rules', [{ name: 'Imp', sequence: 1 }, { name: 'Shared', sequence: 2, priority: '0' }, { name: 'Hidden', sequence: 3, priority: '0' }]);
    const [imp, shared, hidden] = p.ids as [number, number, number];
    const before = await numbers(p.id);
    expect((await reseq({ dropped_column_id: shared, after_column_id: null, scope_filter: p.scope }, userKey)).statusCode).toBe(403);
    expect((await reseq({ dropped_column_id: hidden, after_column_id: null, scope_filter: p.scope }, userKey)).statusCode).toBe(404);
    expect((await reseq({ dropped_column_id: imp, after_column_id: null, sequence_field: 'name', scope_filter: p.scope }, userKey)).statusCode).toBe(400);
    expect(await numbers(p.id)).toEqual(before);
  });
});
