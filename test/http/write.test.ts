/**
 * Create, update and delete (spec §4.4) with the write-key rules to the letter, OneToMany and
 * ManyToMany writes (ARCHITECTURE §9). A small module written at start-up adds a model with a
 * computed field that has a setter, a computed field without one, and a readonly field.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentEnv } from '../../src/orm/env.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODEL = `
import { Model, fields } from 'fieldforge';

export class WriteProbe extends Model {
  static override fields = {
    name: fields.Char({ required: true }),
    amount: fields.Integer({ default: 0 }),
    // Computed, stored, with a setter: writable.
    doubled: fields.Integer({ calculate: 'calc_doubled', store: true, depends: ['amount'], setter: 'set_doubled' }),
    // Computed without a setter: ignored in writes.
    shout: fields.Char({ calculate: 'calc_shout' }),
    tripled: fields.Integer({ calculate: 'calc_tripled', store: true, depends: ['amount'] }),
    locked: fields.Char({ readonly: true }),
  };
  declare name: string;
  declare amount: number;
  calc_doubled(): number { return (this.amount ?? 0) * 2; }
  async set_doubled(value: number): Promise<void> { await this.write({ amount: value / 2 }); }
  calc_tripled(): number { return (this.amount ?? 0) * 3; }
  calc_shout(): string { return String(this.name).toUpperCase(); }
}
`;

let t: TestDatabase;
let probeRoot: string;
let adminUid: number;
let otherUid: number;
const tags = {} as { a: number; b: number; c: number };
let stageNew: number;

beforeAll(async () => {
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-write-probe-'));
  await writeProbeModule(probeRoot, 'write_probe', { 'models/index.ts': PROBE_MODEL, 'security/access.yaml': adminAccessYaml(['WriteProbe']) });
  t = await testDatabase('full', [probeRoot]);
  await t.platform.install(t.name, { init: ['write_probe'] });
  await t.run(async () => {
    const [a, b, c] = await ProjectTag.create_many([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    Object.assign(tags, { a: a!.id, b: b!.id, c: c!.id });
    stageNew = (await ProjectStage.query({ name: 'New' }).first())!.id;
  });
  // The API key's user (audit columns of what it writes) and another user.
  const me = await t.api('POST', '/api/create/Contact', { name: 'whoami' });
  const mine = await t.api('POST', `/api/fetch/Contact/${me.json().id}`, { fields: ['created_by'] });
  adminUid = mine.json().created_by.id;
  otherUid = (await t.api('POST', '/api/create/User', { name: 'Other user' })).json().id;
});
afterAll(async () => {
  await t?.close();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

async function create(model: string, body: unknown) {
  const res = await t.api('POST', `/api/create/${model}`, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
async function update(model: string, id: number, body: unknown) {
  const res = await t.api('PUT', `/api/update/${model}/${id}`, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
async function fetch(model: string, id: number, fields: string[]) {
  const res = await t.api('POST', `/api/fetch/${model}/${id}`, { fields });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('create, update, delete', () => {
  it('create answers exactly {id, name, display_name}', async () => {
    const res = await t.api('POST', '/api/create/ProjectTask', { name: 'First task', stage: stageNew });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toEqual({ id: expect.any(Number), name: 'First task', display_name: 'First task' });
    expect(Object.keys(body).sort()).toEqual(['display_name', 'id', 'name']);
    expect(Number.isInteger(body.id)).toBe(true);
    expect(await fetch('ProjectTask', body.id, ['name', 'stage'])).toEqual({
      id: body.id, display_name: 'First task', name: 'First task', stage: { id: stageNew, display_name: 'New' },
    });
  });

  it('update changes the fields given and leaves the others', async () => {
    const { id } = await create('ProjectTask', { name: 'To update', description: 'keep me', priority: '1' });
    const answer = await update('ProjectTask', id, { name: 'Updated', priority: '2', stage: stageNew });
    expect(answer).toEqual({ id, name: 'Updated', display_name: 'Updated' });
    expect(await fetch('ProjectTask', id, ['name', 'description', 'priority', 'stage'])).toEqual({
      id, display_name: 'Updated', name: 'Updated', description: 'keep me', priority: '2', stage: { id: stageNew, display_name: 'New' },
    });
    await update('ProjectTask', id, { stage: null });
    expect((await fetch('ProjectTask', id, ['stage'])).stage).toBeNull();
  });

  it('delete removes the record; deleting or updating a missing record is a 404', async () => {
    const { id } = await create('ProjectTask', { name: 'To delete' });
    const del = await t.api('DELETE', `/api/delete/ProjectTask/${id}`);
    expect(del.statusCode, del.body).toBe(200);
    const gone = await t.api('POST', `/api/fetch/ProjectTask/${id}`, {});
    expect(gone.statusCode).toBe(404);
    const again = await t.api('DELETE', `/api/delete/ProjectTask/${id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ detail: `ProjectTask ${id} does not exist`, error: 'NotFound' });
    const upd = await t.api('PUT', `/api/update/ProjectTask/${id}`, { name: 'ghost' });
    expect(upd.statusCode).toBe(404);
    expect(upd.json()).toMatchObject({ detail: `ProjectTask ${id} does not exist`, error: 'NotFound' });
  });

  it('invalid values are a 400 ValidationError naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ description: 'no name' }, "Field 'name' of Task is required"],
      [{ name: 'x', priority: '7' }, "Invalid value '7' for field 'priority' of ProjectTask: expected one of 0, 1, 2"],
      [{ name: 'x', deadline: 'soon' }, "Invalid value 'soon' for field 'deadline' of ProjectTask: expected a date YYYY-MM-DD"],
      [{ name: 'x', stage: 999999 }, "Field 'stage': ProjectStage 999999 does not exist"],
      [{ name: 'x', tags: [999999] }, "Field 'tags': ProjectTag 999999 does not exist"],
    ];
    for (const [body, detail] of cases) {
      const res = await t.api('POST', '/api/create/ProjectTask', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ detail, error: 'ValidationError' });
    }
  });
});

describe('write-key rules (spec §4.4)', () => {
  it('ignores computed fields without a setter on create and update', async () => {
    const { id } = await create('ProjectTask', { name: 'Hours', planned_hours: 8, effective_hours: 3, remaining_hours: 99, subtask_count: 42 });
    expect(await fetch('ProjectTask', id, ['remaining_hours', 'subtask_count'])).toMatchObject({ remaining_hours: 5, subtask_count: 0 });
    await update('ProjectTask', id, { remaining_hours: 77, subtask_count: 13, effective_hours: 4 });
    expect(await fetch('ProjectTask', id, ['remaining_hours', 'subtask_count'])).toMatchObject({ remaining_hours: 4, subtask_count: 0 });

    const probe = await create('WriteProbe', { name: 'p', amount: 2, tripled: 100, shout: 'ignored' });
    expect(await fetch('WriteProbe', probe.id, ['amount', 'tripled', 'shout'])).toEqual({
      id: probe.id, display_name: 'p', amount: 2, tripled: 6, shout: 'P',
    });
    await update('WriteProbe', probe.id, { tripled: 1, shout: 'nope' });
    expect(await fetch('WriteProbe', probe.id, ['amount', 'tripled', 'shout'])).toMatchObject({ amount: 2, tripled: 6, shout: 'P' });
  });

  it('keeps a computed field with a setter writable', async () => {
    const { id } = await create('WriteProbe', { name: 'settable', doubled: 10 });
    expect(await fetch('WriteProbe', id, ['amount', 'doubled'])).toEqual({ id, display_name: 'settable', amount: 5, doubled: 10 });
    await update('WriteProbe', id, { doubled: 40 });
    expect(await fetch('WriteProbe', id, ['amount', 'doubled', 'tripled'])).toEqual({
      id, display_name: 'settable', amount: 20, doubled: 40, tripled: 60,
    });
  });

  it('ignores readonly fields on create and update', async () => {
    const { id } = await create('WriteProbe', { name: 'ro', locked: 'set by client' });
    expect((await fetch('WriteProbe', id, ['locked'])).locked).toBeNull();
    await update('WriteProbe', id, { locked: 'again' });
    expect((await fetch('WriteProbe', id, ['locked'])).locked).toBeNull();
    const user = await create('User', { name: 'Not a robot', is_service_account: true });
    expect((await fetch('User', user.id, ['is_service_account'])).is_service_account).toBe(false);
  });

  it('ignores id on create', async () => {
    const { id } = await create('ProjectTask', { id: 424242, name: 'Own id' });
    expect(id).not.toBe(424242);
    expect((await t.api('POST', '/api/fetch/ProjectTask/424242', {})).statusCode).toBe(404);
  });

  it('ignores id on update: the URL id applies', async () => {
    const a = await create('ProjectTask', { name: 'Task A' });
    const b = await create('ProjectTask', { name: 'Task B' });
    const answer = await update('ProjectTask', a.id, { id: b.id, name: 'Task A renamed' });
    expect(answer).toEqual({ id: a.id, name: 'Task A renamed', display_name: 'Task A renamed' });
    expect((await fetch('ProjectTask', a.id, ['name'])).name).toBe('Task A renamed');
    expect((await fetch('ProjectTask', b.id, ['name'])).name).toBe('Task B');
  });

  it('honours identifier and created_date on create, not the other audit columns', async () => {
    const { id } = await create('ProjectTask', {
      name: 'Migrated', identifier: 'legacy.task_1', created_date: '2001-02-03T04:05:06.000Z',
      created_by: otherUid, updated_by: otherUid, updated_date: '2002-01-01T00:00:00.000Z',
    });
    const rec = await fetch('ProjectTask', id, ['identifier', 'created_date', 'created_by', 'updated_date', 'updated_by']);
    expect(rec.identifier).toBe('legacy.task_1');
    expect(rec.created_date).toBe('2001-02-03T04:05:06.000Z');
    expect(rec.created_by).toEqual({ id: adminUid, display_name: 'test admin' });
    expect(rec.updated_by).toEqual({ id: adminUid, display_name: 'test admin' });
    expect(Date.now() - Date.parse(rec.updated_date)).toBeLessThan(60_000);
  });

  it('ignores identifier and every audit column on update', async () => {
    const { id } = await create('ProjectTask', { name: 'Audited', identifier: 'legacy.task_2', created_date: '2001-02-03T04:05:06.000Z' });
    const before = await fetch('ProjectTask', id, ['identifier', 'created_date', 'created_by', 'updated_date', 'updated_by']);
    await update('ProjectTask', id, {
      name: 'Audited again',
      identifier: 'legacy.changed', created_date: '1999-01-01T00:00:00.000Z', created_by: otherUid,
      updated_date: '1999-01-01T00:00:00.000Z', updated_by: otherUid,
    });
    const after = await fetch('ProjectTask', id, ['name', 'identifier', 'created_date', 'created_by', 'updated_date', 'updated_by']);
    expect(after.name).toBe('Audited again');
    expect(after.identifier).toBe('legacy.task_2');
    expect(after.created_date).toBe('2001-02-03T04:05:06.000Z');
    expect(after.created_by).toEqual(before.created_by);
    expect(after.updated_by).toEqual({ id: adminUid, display_name: 'test admin' });
    expect(Date.parse(after.updated_date)).toBeGreaterThanOrEqual(Date.parse(before.updated_date));
    expect(after.updated_date).not.toBe('1999-01-01T00:00:00.000Z');
  });

  it('ignores unknown keys, never an error', async () => {
    const { id } = await create('ProjectTask', { name: 'Lenient', nope: 1, 'stage.name': 'x', stage__name: 'y', display_name: 'Fake' });
    // Keys that name JavaScript internals are just unknown keys too.
    const raw = await t.app.inject({
      method: 'POST', url: '/api/create/ProjectTask',
      headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
      payload: '{"name":"Proto","__proto__":{"name":"polluted","priority":"2"},"constructor":{"prototype":{"name":"x"}},"toString":1}',
    });
    expect(raw.statusCode, raw.body).toBe(200);
    expect(raw.json()).toEqual({ id: expect.any(Number), name: 'Proto', display_name: 'Proto' });
    expect((await fetch('ProjectTask', raw.json().id, ['priority'])).priority).toBe('0');
    expect(({} as Record<string, unknown>).name).toBeUndefined();
    expect(await fetch('ProjectTask', id, ['name'])).toEqual({ id, display_name: 'Lenient', name: 'Lenient' });
    const answer = await update('ProjectTask', id, { also_unknown: [1, 2], display_name: 'Fake' });
    expect(answer).toEqual({ id, name: 'Lenient', display_name: 'Lenient' });
    // An update with nothing settable is a no-op that still answers.
    expect(await update('ProjectTask', id, {})).toEqual({ id, name: 'Lenient', display_name: 'Lenient' });
  });

  it('never writes internal fields (password and key hashes)', async () => {
    const user = await create('User', { name: 'Hash probe', password_hash: 'planted' });
    await update('User', user.id, { password_hash: 'planted again' });
    const stored = await t.run(async () => {
      const { rows } = await sql<{ password_hash: string | null }>`SELECT password_hash FROM "user" WHERE id = ${user.id}`.execute(currentEnv().work.trx);
      return rows[0]!.password_hash;
    });
    expect(stored).toBeNull();
  });
});

describe('OneToMany writes', () => {
  it('creates lines from line objects on create (ProjectProject.tasks)', async () => {
    const { id } = await create('ProjectProject', { name: 'With lines', tasks: [{ name: 'L1', priority: '2' }, { name: 'L2', remaining_hours: 50 }] });
    const project = await fetch('ProjectProject', id, ['task_count', 'tasks.name', 'tasks.priority', 'tasks.project']);
    expect(project.task_count).toBe(2);
    expect(project.tasks.map((x: any) => [x.name, x.priority, x.project.id])).toEqual([['L1', '2', id], ['L2', '0', id]]);
  });

  it('on update keeps ids, updates line objects with an id, creates the others and drops the rest', async () => {
    const { id } = await create('ProjectProject', { name: 'Lines update', tasks: [{ name: 'keep' }, { name: 'rename' }, { name: 'drop' }] });
    const before = (await fetch('ProjectProject', id, ['tasks.name'])).tasks as { id: number; name: string }[];
    const [keep, rename, drop] = before.map((x) => x.id);
    await update('ProjectProject', id, { tasks: [keep, { id: rename, name: 'renamed' }, { name: 'new line' }] });
    const after = (await fetch('ProjectProject', id, ['task_count', 'tasks.name']));
    expect(after.task_count).toBe(3);
    const byName = Object.fromEntries(after.tasks.map((x: any) => [x.name, x.id]));
    expect(byName.keep).toBe(keep);
    expect(byName.renamed).toBe(rename); // updated in place, not replaced by a new line
    expect(byName['new line']).toEqual(expect.any(Number));
    expect(Object.keys(byName).sort()).toEqual(['keep', 'new line', 'renamed']);
    // The inverse is CASCADE, so a dropped line is deleted.
    expect((await t.api('POST', `/api/fetch/ProjectTask/${drop}`, {})).statusCode).toBe(404);
  });

  it('works for ProjectTask.subtasks and recomputes the parent', async () => {
    const { id } = await create('ProjectTask', { name: 'Parent', subtasks: [{ name: 'S1' }, { name: 'S2' }] });
    const parent = await fetch('ProjectTask', id, ['subtask_count', 'subtasks.name', 'subtasks.parent']);
    expect(parent.subtask_count).toBe(2);
    expect(parent.subtasks.map((s: any) => [s.name, s.parent.id])).toEqual([['S1', id], ['S2', id]]);
    await update('ProjectTask', id, { subtasks: [parent.subtasks[1].id] });
    const after = await fetch('ProjectTask', id, ['subtask_count', 'subtasks.name']);
    expect(after.subtask_count).toBe(1);
    expect(after.subtasks.map((s: any) => s.name)).toEqual(['S2']);
  });

  it('applies the write-key rules to lines too', async () => {
    const { id } = await create('ProjectTask', { name: 'Rules parent', subtasks: [{ name: 'S', remaining_hours: 9, unknown: 1, planned_hours: 2, identifier: 'line.ext' }] });
    const [line] = (await fetch('ProjectTask', id, ['subtasks.remaining_hours', 'subtasks.identifier'])).subtasks;
    expect(line).toMatchObject({ remaining_hours: 2, identifier: 'line.ext' });
    // A line object with an id names an existing line: a missing one is a 404 and nothing is created.
    const missing = await t.api('POST', '/api/create/ProjectTask', { name: 'Ghost parent', subtasks: [{ id: 777777, name: 'S' }] });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ detail: 'ProjectTask 777777 does not exist', error: 'NotFound' });
    const ghost = await t.api('POST', '/api/query/ProjectTask', { filter_str: "Q(name='Ghost parent')", counter: true });
    expect(ghost.json().count).toBe(0);
  });

  it('refuses a value that is not a list', async () => {
    const res = await t.api('POST', '/api/create/ProjectProject', { name: 'Bad lines', tasks: 'T1' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: "Field 'tasks' of ProjectProject takes a list of lines or ids", error: 'ValidationError' });
  });
});

describe('ManyToMany writes', () => {
  it('replaces the set', async () => {
    const tagNames = async (id: number) => (await fetch('ProjectTask', id, ['tags.name'])).tags.map((x: any) => x.name);
    const { id } = await create('ProjectTask', { name: 'Tagged', tags: [tags.a, tags.b] });
    expect(await tagNames(id)).toEqual(['a', 'b']);
    await update('ProjectTask', id, { tags: [tags.b, tags.c] });
    expect(await tagNames(id)).toEqual(['b', 'c']);
    await update('ProjectTask', id, { name: 'Tagged still' });
    expect(await tagNames(id)).toEqual(['b', 'c']); // not named: untouched
    await update('ProjectTask', id, { tags: [] });
    expect(await tagNames(id)).toEqual([]);
    await update('ProjectTask', id, { tags: [tags.c, tags.c] });
    expect(await tagNames(id)).toEqual(['c']);
  });

  it('refuses unknown ids and non-lists without changing the set', async () => {
    const { id } = await create('ProjectTask', { name: 'Tagged 2', tags: [tags.a] });
    const missing = await t.api('PUT', `/api/update/ProjectTask/${id}`, { tags: [tags.b, 999999] });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ detail: "Field 'tags': ProjectTag 999999 does not exist", error: 'ValidationError' });
    const notList = await t.api('PUT', `/api/update/ProjectTask/${id}`, { tags: tags.b });
    expect(notList.statusCode).toBe(400);
    expect(notList.json()).toMatchObject({ detail: "Field 'tags' of ProjectTask takes a list of ids", error: 'ValidationError' });
    expect((await fetch('ProjectTask', id, ['tags'])).tags).toEqual([{ id: tags.a, display_name: 'a' }]);
  });

  it('ids that are no ids — beyond int32, beyond a double, as text — are refused naming the field, for links and lines alike', async () => {
    const raw = (payload: string) => t.app.inject({
      method: 'POST', url: '/api/create/ProjectTask', payload,
      headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
    });
    const before = await t.run(() => ProjectTask.query().with_archived().count());
    const cases: [string, string][] = [
      ['{"name": "x", "tags": [2147483648]}', "Field 'tags' of ProjectTask takes a list of ProjectTag ids (integers from 1 to 2147483647); got 2147483648"],
      ['{"name": "x", "tags": [1e400]}', "Field 'tags' of ProjectTask takes a list of ProjectTag ids (integers from 1 to 2147483647); got Infinity"],
      ['{"name": "x", "subtasks": [2147483648]}', "Field 'subtasks' of ProjectTask takes ProjectTask lines: objects (with the id of an existing line to change it) or ids (integers from 1 to 2147483647); got 2147483648"],
      ['{"name": "x", "subtasks": [{"id": 2147483648, "name": "y"}]}', "Field 'subtasks' of ProjectTask takes ProjectTask lines"],
      // Before, a line whose id was text was silently taken for a new line.
      ['{"name": "x", "subtasks": [{"id": "1", "name": "y"}]}', "Field 'subtasks' of ProjectTask takes ProjectTask lines"],
    ];
    for (const [payload, detail] of cases) {
      const res = await raw(payload);
      expect(res.statusCode, `${payload}: ${res.body}`).toBe(400);
      expect(res.json().error).toBe('ValidationError');
      expect(res.json().detail).toContain(detail);
    }
    expect(await t.run(() => ProjectTask.query().with_archived().count())).toBe(before);
  });
});

describe('body shape', () => {
  it('a create or update body that is not an object is a 400', async () => {
    for (const body of [[{ name: 'x' }], 'x', 5, null]) {
      const res = await t.api('POST', '/api/create/ProjectTask', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ detail: 'The request body must be an object of field values', error: 'BadRequest' });
    }
    const { id } = await create('ProjectTask', { name: 'Shape' });
    const res = await t.api('PUT', `/api/update/ProjectTask/${id}`, [1]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: 'The request body must be an object of field values', error: 'BadRequest' });
  });
});
