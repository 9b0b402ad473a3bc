/**
 * Resequence (spec §4.9, CONTRACTS C3) on the PostgreSQL server: the dropped record lands after
 * its anchor (first when the anchor is null), the scope — what the caller sees matching
 * `scope_filter`, every visible row without it — is renumbered 1..N in the model's default order
 * (NULL numbers after the numbered rows, ties in that order then by id), and only in ONE UPDATE
 * whatever N. Refusals write nothing: a dropped or anchor record outside the scope (400), a dropped
 * record that does not exist or that the caller cannot see (404), a sequence field that is not a
 * writable Integer (400), a row whose number would change but that the caller may not change (403).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let userKey: string;
const projects: Record<string, number> = {};

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await RecordRule.create_many([
      // The restricted key sees important tasks and shared ones; it may change important ones only.
      { name: 'Important tasks', model: 'ProjectTask', filter: "Q(priority__in=['1', '2'])", groups: [projectUser] },
      { name: 'Shared tasks (read)', model: 'ProjectTask', filter: "Q(name__startswith='Shared')", groups: [projectUser], perm_write: false, perm_create: false, perm_delete: false },
    ]);
    for (const name of ['Main', 'Other', 'Nulls', 'Rules', 'Refusals']) projects[name] = (await ProjectProject.create({ name: `Reseq ${name}` })).id;
    ({ key: userKey } = await createServiceAccountKey({ name: 'resequence user', groups: ['core.group_user', 'project.group_project_user'] }));
  });
  await t.api('POST', '/api/query/ProjectTask', { limit: 1 }); // warm registry and key
});
afterAll(async () => { await t?.close(); });

/** Tasks of a project, created as the platform with the given sequences (null = none); their ids in that order. */
async function tasks(project: string, specs: readonly { name: string; sequence: number | null; priority?: string; deadline?: string }[]): Promise<number[]> {
  return t.run(async () => {
    const made = await ProjectTask.create_many(specs.map((s) => ({ priority: '1', ...s, project: projects[project] })));
    return made.map((r) => r.id);
  });
}

/** `{id: sequence}` of the tasks of a project, read as the platform. */
async function sequences(project: string): Promise<Record<number, number | null>> {
  const rows = await t.run(() => ProjectTask.query({ project: projects[project] }).with_archived().read(['sequence']));
  return Object.fromEntries(rows.map((r) => [r.id, r.sequence as number | null]));
}

/** Ids of a project's tasks in the order a list shows them (the model's default order). */
async function listed(project: string, key?: string): Promise<number[]> {
  const res = await t.api('POST', '/api/query/ProjectTask', { fields: ['id'], filter_str: `Q(project=${projects[project]})`, limit: 500 },
    key ? { authorization: `Bearer ${key}` } : {});
  expect(res.statusCode, res.body).toBe(200);
  return res.json().map((r: { id: number }) => r.id);
}

function reseq(model: string, body: unknown, key?: string) {
  return t.api('POST', `/api/resequence/${model}`, body, key ? { authorization: `Bearer ${key}` } : {});
}
async function ok(model: string, body: unknown, key?: string): Promise<number[]> {
  const res = await reseq(model, body, key);
  expect(res.statusCode, res.body).toBe(200);
  expect(Object.keys(res.json())).toEqual(['ids']);
  return res.json().ids;
}

describe('resequence places the dropped record and renumbers the scope 1..N', () => {
  let ids: number[];
  beforeAll(async () => {
    ids = await tasks('Main', [1, 2, 3, 4, 5].map((n) => ({ name: `Main ${n}`, sequence: n * 10 })));
  });

  it('moves the dropped record after the anchor; the list then shows the answered order', async () => {
    const [a, b, c, d, e] = ids as [number, number, number, number, number];
    const answer = await ok('ProjectTask', { dropped_column_id: a, after_column_id: c, scope_filter: `Q(project=${projects.Main})` });
    expect(answer).toEqual([b, c, a, d, e]);
    expect(await sequences('Main')).toEqual({ [b]: 1, [c]: 2, [a]: 3, [d]: 4, [e]: 5 });
    expect(await listed('Main')).toEqual(answer);
  });

  it('after_column_id null puts the dropped record first; moving to the end works too', async () => {
    const [a, b, c, d, e] = ids as [number, number, number, number, number];
    expect(await ok('ProjectTask', { dropped_column_id: e, after_column_id: null, scope_filter: `Q(project=${projects.Main})` }))
      .toEqual([e, b, c, a, d]);
    expect(await ok('ProjectTask', { dropped_column_id: b, after_column_id: d, sequence_field: 'sequence', scope_filter: `Q(project=${projects.Main})` }))
      .toEqual([e, c, a, d, b]);
    expect(await sequences('Main')).toEqual({ [e]: 1, [c]: 2, [a]: 3, [d]: 4, [b]: 5 });
    // A missing after_column_id means first place too.
    expect((await ok('ProjectTask', { dropped_column_id: a, scope_filter: `Q(project=${projects.Main})` }))[0]).toBe(a);
  });

  it('scope_filter confines the renumbering: rows outside it keep their numbers and audit columns', async () => {
    const others = await tasks('Other', [{ name: 'Other 1', sequence: 7 }, { name: 'Other 2', sequence: 7 }]);
    const before = await t.run(() => ProjectTask.query({ id__in: others }).read(['sequence', 'updated_date']));
    await ok('ProjectTask', { dropped_column_id: ids[2], after_column_id: ids[3], scope_filter: `Q(project=${projects.Main})` });
    expect(await t.run(() => ProjectTask.query({ id__in: others }).read(['sequence', 'updated_date']))).toEqual(before);
  });

  it('only records whose number changes are written (updated_date moves on those alone)', async () => {
    const [x, y, z] = await tasks('Other', [{ name: 'Audit 1', sequence: 1 }, { name: 'Audit 2', sequence: 2 }, { name: 'Audit 3', sequence: 3 }]);
    const scope = `Q(project=${projects.Other}) & Q(name__startswith='Audit')`;
    const dates = async () => Object.fromEntries((await t.run(() => ProjectTask.query({ id__in: [x, y, z] }).read(['updated_date']))).map((r) => [r.id, r.updated_date]));
    const before = await dates();
    await new Promise((r) => setTimeout(r, 20));
    expect(await ok('ProjectTask', { dropped_column_id: z, after_column_id: x, scope_filter: scope })).toEqual([x, z, y]);
    const after = await dates();
    expect(after[x!]).toEqual(before[x!]);
    expect(after[y!]).not.toEqual(before[y!]);
    expect(after[z!]).not.toEqual(before[z!]);
  });

  it('rows without a number sort after the numbered ones; equal numbers keep the default order, then id', async () => {
    // Default order of tasks: sequence, deadline, id. n1 and n2 tie on sequence and deadline (id decides);
    // e1 ties with them on sequence but has the earlier deadline.
    const [z1, n1, z2, n2, e1, s1] = await tasks('Nulls', [
      { name: 'Z1', sequence: null }, { name: 'N1', sequence: 5, deadline: '2030-01-02' }, { name: 'Z2', sequence: null },
      { name: 'N2', sequence: 5, deadline: '2030-01-02' }, { name: 'E1', sequence: 5, deadline: '2030-01-01' }, { name: 'S1', sequence: 2 },
    ]) as [number, number, number, number, number, number];
    await t.run(() => ProjectTask.query({ id__in: [z1, z2] }).update({ sequence: null }));
    expect(await ok('ProjectTask', { dropped_column_id: z2, after_column_id: s1, scope_filter: `Q(project=${projects.Nulls})` }))
      .toEqual([s1, z2, e1, n1, n2, z1]);
    expect(await sequences('Nulls')).toEqual({ [s1]: 1, [z2]: 2, [e1]: 3, [n1]: 4, [n2]: 5, [z1]: 6 });
  });

  it('without scope_filter every visible row of the model is one sequence (stages)', async () => {
    const stages = await t.run(async () => (await ProjectStage.query().read(['id'])).map((r) => r.id as number));
    expect(stages.length).toBeGreaterThan(2);
    const answer = await ok('ProjectStage', { dropped_column_id: stages[0], after_column_id: stages[stages.length - 1] });
    expect(answer).toEqual([...stages.slice(1), stages[0]]);
    const rows = await t.run(() => ProjectStage.query().read(['sequence']));
    expect(rows.map((r) => r.id)).toEqual(answer);
    expect(rows.map((r) => r.sequence)).toEqual(answer.map((_, i) => i + 1));
  });
});

describe('resequence costs one UPDATE whatever the number of rows', () => {
  it('1, 100 and 1,000 rows: the same statements, one of them an UPDATE', async () => {
    const counts: number[] = [];
    for (const n of [1, 100, 1000]) {
      const project = (await t.run(() => ProjectProject.create({ name: `Reseq count ${n}` }))).id;
      const ids = await t.run(async () => (await ProjectTask.create_many(Array.from({ length: n }, (_, i) => ({
        name: `C${n} ${i}`, sequence: n - i, project,
      })))).map((r) => r.id));
      let answer: number[] = [];
      const { count, statements } = await t.countStatements(async () => {
        answer = await ok('ProjectTask', { dropped_column_id: ids[0], after_column_id: null, scope_filter: `Q(project=${project})` });
      });
      // Created with decreasing numbers: the list (and the answer) runs backwards, the dropped record first.
      expect(answer).toEqual([ids[0], ...ids.slice(1).reverse()]);
      expect(statements.filter((s) => /^\s*update\b/i.test(s))).toHaveLength(n === 1 ? 0 : 1);
      if (n > 1) counts.push(count);
      const numbers = await t.run(() => ProjectTask.query({ project }).read(['sequence']));
      expect(numbers.map((r) => r.id)).toEqual(answer);
      expect(numbers.map((r) => r.sequence)).toEqual(answer.map((_, i) => i + 1));
    }
    console.log(`resequence statements at 100 / 1000 rows: ${counts.join(' / ')}`);
    expect(counts[0]).toBe(counts[1]);
  });
});

describe('resequence refusals write nothing', () => {
  let ids: number[];
  let other: number;
  beforeAll(async () => {
    ids = await tasks('Refusals', [1, 2, 3].map((n) => ({ name: `Ref ${n}`, sequence: n })));
    [other] = await tasks('Other', [{ name: 'Ref elsewhere', sequence: 1 }]);
  });
  const scope = () => `Q(project=${projects.Refusals})`;

  async function refused(status: number, model: string, body: Record<string, unknown>, key?: string): Promise<string> {
    const before = await sequences('Refusals');
    const res = await reseq(model, body, key);
    expect(res.statusCode, res.body).toBe(status);
    expect(Object.keys(res.json())).toEqual(expect.arrayContaining(['detail', 'error']));
    expect(await sequences('Refusals')).toEqual(before);
    return res.json().detail as string;
  }

  it('a dropped or anchor record outside the scope is a 400', async () => {
    expect(await refused(400, 'ProjectTask', { dropped_column_id: other, after_column_id: ids[0], scope_filter: scope() })).toMatch(/dropped_column_id/);
    expect(await refused(400, 'ProjectTask', { dropped_column_id: ids[0], after_column_id: other, scope_filter: scope() })).toMatch(/after_column_id/);
  });

  it('a dropped record that does not exist is a 404; an unknown model too', async () => {
    await refused(404, 'ProjectTask', { dropped_column_id: 2_000_000_000, after_column_id: null, scope_filter: scope() });
    await refused(404, 'NoSuchModel', { dropped_column_id: ids[0], after_column_id: null });
  });

  it('a sequence field that is not a writable Integer of the model is a 400', async () => {
    for (const sequence_field of ['name', 'no_such_field', 'planned_hours', 'subtask_count', 'id', 'created_by']) {
      expect(await refused(400, 'ProjectTask', { dropped_column_id: ids[0], after_column_id: ids[1], sequence_field, scope_filter: scope() }))
        .toMatch(/Integer/);
    }
  });

  it('malformed bodies are 400s: unknown keys, ids that are no ids, a filter that does not parse', async () => {
    await refused(400, 'ProjectTask', { dropped_column_id: ids[0], after_column_id: null, scope: scope() });
    await refused(400, 'ProjectTask', { dropped_column_id: 'x', after_column_id: null, scope_filter: scope() });
    await refused(400, 'ProjectTask', { dropped_column_id: ids[0], after_column_id: ids[0], scope_filter: scope() });
    await refused(400, 'ProjectTask', { dropped_column_id: ids[0], after_column_id: null, scope_filter: 'Q(project=' });
  });
});

describe('resequence under a restricted key', () => {
  let important: number[];
  let shared: number;
  let hidden: number;
  beforeAll(async () => {
    important = await tasks('Rules', [{ name: 'Imp 1', sequence: 1 }, { name: 'Imp 2', sequence: 2 }]);
    [shared] = await tasks('Rules', [{ name: 'Shared 3', sequence: 3, priority: '0' }]);
    [hidden] = await tasks('Rules', [{ name: 'Hidden 4', sequence: 4, priority: '0' }]);
  });

  it('the scope is what the key sees: a hidden row is neither renumbered nor answered', async () => {
    const [i1, i2] = important as [number, number];
    expect(await listed('Rules', userKey)).toEqual([i1, i2, shared]);
    expect(await ok('ProjectTask', { dropped_column_id: i2, after_column_id: null, scope_filter: `Q(project=${projects.Rules})` }, userKey))
      .toEqual([i2, i1, shared]);
    // The shared row kept its number (3), so the key needed no right to change it; the hidden row is untouched.
    expect(await sequences('Rules')).toEqual({ [i2]: 1, [i1]: 2, [shared]: 3, [hidden]: 4 });
  });

  it('a row whose number would change but that the key may not change is a 403, nothing written', async () => {
    const before = await sequences('Rules');
    const res = await reseq('ProjectTask', { dropped_column_id: shared, after_column_id: null, scope_filter: `Q(project=${projects.Rules})` }, userKey);
    expect(res.statusCode, res.body).toBe(403);
    expect(await sequences('Rules')).toEqual(before);
  });

  it('a dropped record the key cannot see is a 404, as if it did not exist', async () => {
    const res = await reseq('ProjectTask', { dropped_column_id: hidden, after_column_id: null, scope_filter: `Q(project=${projects.Rules})` }, userKey);
    expect(res.statusCode, res.body).toBe(404);
  });

  it('a model the key may read but not change is a 403', async () => {
    const stage = await t.run(async () => (await ProjectStage.query().first())!.id);
    const res = await reseq('ProjectStage', { dropped_column_id: stage, after_column_id: null }, userKey);
    expect(res.statusCode, res.body).toBe(403);
  });
});
