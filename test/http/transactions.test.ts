/**
 * Every request is one transaction (ARCHITECTURE §5): bad input never half-writes. Each test
 * makes a request fail after it has already written something and checks that nothing stayed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let tag: number;
let stage: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    tag = (await ProjectTag.create({ name: 'tx' })).id;
    stage = (await ProjectStage.query({ name: 'Review' }).first())!.id;
  });
});
afterAll(async () => { await t?.close(); });

/** Row counts of the tables a failed request might have touched, read outside any request. */
function counts() {
  return t.run(async () => ({
    projects: await ProjectProject.query().with_archived().count(),
    tasks: await ProjectTask.query().with_archived().count(),
    stages: await ProjectStage.query().count(),
  }));
}

describe('one request, one transaction', () => {
  it('a create whose OneToMany line is invalid leaves no parent row', async () => {
    const before = await counts();
    // The parent row and the first line are inserted before the second line fails.
    const res = await t.api('POST', '/api/create/ProjectProject', { name: 'Doomed project', tasks: [{ name: 'fine line' }, { description: 'no name' }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: "Field 'name' of Task is required", error: 'ValidationError' });
    expect(await counts()).toEqual(before);
    const found = await t.api('POST', '/api/query/ProjectProject', { filter_str: "Q(name='Doomed project') & Q(active__in=[True, False])", counter: true });
    expect(found.json()).toEqual({ count: 0, data: [] });
  });

  it('a create whose ManyToMany target is missing leaves no row', async () => {
    const before = await counts();
    const res = await t.api('POST', '/api/create/ProjectTask', { name: 'Doomed task', tags: [tag, 999999] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: "Field 'tags': ProjectTag 999999 does not exist", error: 'ValidationError' });
    expect(await counts()).toEqual(before);
  });

  it('an update that fails halfway leaves nothing changed', async () => {
    const created = await t.api('POST', '/api/create/ProjectProject', { name: 'Stable project', tasks: [{ name: 'one' }, { name: 'two' }] });
    const id = created.json().id;
    const snapshot = async () => (await t.api('POST', `/api/fetch/ProjectProject/${id}`, { fields: ['name', 'description', 'task_count', 'tasks.name', 'tasks.stage'] })).json();
    const before = await snapshot();
    const [one] = before.tasks;
    const beforeCounts = await counts();
    // Columns are updated, then 'two' is deleted (left out), 'one' moved to a stage, a line is
    // created — and then the last line fails.
    const res = await t.api('PUT', `/api/update/ProjectProject/${id}`, {
      name: 'Changed name', description: 'changed', tasks: [{ id: one.id, stage }, { name: 'three' }, { name: 'bad', priority: 'x' }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: "Invalid value 'x' for field 'priority' of ProjectTask: expected one of 0, 1, 2", error: 'ValidationError' });
    expect(await snapshot()).toEqual(before);
    expect(await counts()).toEqual(beforeCounts);
  });

  it('a ManyToMany update that fails after the column update keeps the old values and links', async () => {
    const { id } = (await t.api('POST', '/api/create/ProjectTask', { name: 'Linked', tags: [tag] })).json();
    const res = await t.api('PUT', `/api/update/ProjectTask/${id}`, { name: 'Linked renamed', tags: [999999] });
    expect(res.statusCode).toBe(400);
    const after = (await t.api('POST', `/api/fetch/ProjectTask/${id}`, { fields: ['name', 'tags'] })).json();
    expect(after).toEqual({ id, display_name: 'Linked', name: 'Linked', tags: [{ id: tag, display_name: 'tx' }] });
  });

  it('a delete refused by RESTRICT deletes nothing', async () => {
    const { id: taskId } = (await t.api('POST', '/api/create/ProjectTask', { name: 'Holds the stage', stage })).json();
    const res = await t.api('DELETE', `/api/delete/ProjectStage/${stage}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      detail: "Cannot delete or change this record: Task records still refer to it through 'stage' (on_delete RESTRICT)",
      error: 'ValidationError',
    });
    expect((await t.api('POST', `/api/fetch/ProjectStage/${stage}`, {})).statusCode).toBe(200);
    expect((await t.api('POST', `/api/fetch/ProjectTask/${taskId}`, { fields: ['stage'] })).json().stage).toEqual({ id: stage, display_name: 'Review' });
  });

  it('a deleted parent takes its CASCADE children with it, all or nothing', async () => {
    const { id } = (await t.api('POST', '/api/create/ProjectTask', { name: 'Cascade parent', subtasks: [{ name: 'c1' }, { name: 'c2' }] })).json();
    const children = (await t.api('POST', `/api/fetch/ProjectTask/${id}`, { fields: ['subtasks'] })).json().subtasks.map((s: any) => s.id);
    expect(children).toHaveLength(2);
    const del = await t.api('DELETE', `/api/delete/ProjectTask/${id}`);
    expect(del.statusCode, del.body).toBe(200);
    for (const child of children) expect((await t.api('POST', `/api/fetch/ProjectTask/${child}`, {})).statusCode).toBe(404);
  });
});
