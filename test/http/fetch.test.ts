/** POST /api/fetch/{model}/{id} (spec §4.3): one record, relations prefetched from nested paths. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
const ids = {} as { alice: number; acme: number; tag: number; project: number; stage: number; parent: number; sub1: number; sub2: number; archived: number };

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    ids.stage = (await ProjectStage.query({ name: 'Review' }).first())!.id;
    ids.acme = (await Contact.create({ name: 'Acme', is_company: true })).id;
    ids.alice = (await Contact.create({ name: 'Alice', parent: ids.acme, email: 'alice@acme.test' })).id;
    ids.tag = (await ProjectTag.create({ name: 'urgent' })).id;
    ids.project = (await ProjectProject.create({ name: 'Website', customer: ids.acme })).id;
    ids.parent = (await ProjectTask.create({
      name: 'Launch', project: ids.project, stage: ids.stage, assignee: ids.alice, tags: [ids.tag], deadline: '2031-05-06',
    })).id;
    const [s1, s2] = await ProjectTask.create_many([
      { name: 'Sub one', parent: ids.parent, project: ids.project, assignee: ids.alice, sequence: 1 },
      { name: 'Sub two', parent: ids.parent, project: ids.project, sequence: 2 },
    ]);
    ids.sub1 = s1!.id;
    ids.sub2 = s2!.id;
    ids.archived = (await ProjectTask.create({ name: 'Old task', project: ids.project, active: false })).id;
  });
});
afterAll(async () => { await t?.close(); });

describe('fetch', () => {
  it('returns the record with nested paths prefetched', async () => {
    const res = await t.api('POST', `/api/fetch/ProjectTask/${ids.parent}`, {
      fields: ['name', 'deadline', 'stage.name', 'tags.name', 'assignee.name', 'assignee.parent.name', 'project.customer.email', 'subtasks.name', 'subtasks.assignee.name', 'subtask_count'],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      id: ids.parent,
      display_name: 'Launch',
      name: 'Launch',
      deadline: '2031-05-06',
      subtask_count: 2,
      stage: { id: ids.stage, display_name: 'Review', name: 'Review' },
      tags: [{ id: ids.tag, display_name: 'urgent', name: 'urgent' }],
      assignee: { id: ids.alice, display_name: 'Alice', name: 'Alice', parent: { id: ids.acme, display_name: 'Acme', name: 'Acme' } },
      project: { id: ids.project, display_name: 'Website', customer: { id: ids.acme, display_name: 'Acme', email: null } },
      subtasks: [
        { id: ids.sub1, display_name: 'Sub one', name: 'Sub one', assignee: { id: ids.alice, display_name: 'Alice', name: 'Alice' } },
        { id: ids.sub2, display_name: 'Sub two', name: 'Sub two', assignee: null },
      ],
    });
  });

  it('without fields returns the stored fields and display_name', async () => {
    const res = await t.api('POST', `/api/fetch/ProjectTask/${ids.sub1}`, {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      id: ids.sub1, display_name: 'Sub one', name: 'Sub one', sequence: 1,
      parent: { id: ids.parent, display_name: 'Launch' },
      assignee: { id: ids.alice, display_name: 'Alice' },
    });
    // Also works without any body at all.
    const empty = await t.api('POST', `/api/fetch/ProjectTask/${ids.sub1}`);
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toEqual(res.json());
  });

  it('answers 404 for a missing id', async () => {
    const res = await t.api('POST', '/api/fetch/ProjectTask/999999', { fields: ['name'] });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ detail: 'ProjectTask 999999 does not exist', error: 'NotFound' });
  });

  it('answers 400 for an id that is not a record id', async () => {
    for (const bad of ['abc', '0', '-1', '1.5', '99999999999']) {
      const res = await t.api('POST', `/api/fetch/ProjectTask/${bad}`, {});
      expect(res.statusCode, bad).toBe(400);
      expect(res.json()).toMatchObject({ detail: `'${bad}' is not a record id`, error: 'BadRequest' });
    }
  });

  it('fetches archived records', async () => {
    const res = await t.api('POST', `/api/fetch/ProjectTask/${ids.archived}`, { fields: ['name', 'active'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ id: ids.archived, display_name: 'Old task', name: 'Old task', active: false });
  });

  it('shows archived records behind a ManyToOne but lists only active ones in a to-many', async () => {
    await t.run(() => ProjectTask.query({ id: ids.sub2 }).update({ active: false }));
    try {
      const sub = await t.api('POST', `/api/fetch/ProjectTask/${ids.sub2}`, { fields: ['parent.name'] });
      expect(sub.json().parent).toEqual({ id: ids.parent, display_name: 'Launch', name: 'Launch' });
      const parent = await t.api('POST', `/api/fetch/ProjectTask/${ids.parent}`, { fields: ['subtasks'] });
      expect(parent.json().subtasks).toEqual([{ id: ids.sub1, display_name: 'Sub one' }]);
      await t.run(() => ProjectTask.query({ id: ids.parent }).update({ active: false }));
      const archivedParent = await t.api('POST', `/api/fetch/ProjectTask/${ids.sub1}`, { fields: ['parent'] });
      expect(archivedParent.json().parent).toEqual({ id: ids.parent, display_name: 'Launch' });
    } finally {
      await t.run(() => ProjectTask.query(`Q(id__in=[${ids.sub2}, ${ids.parent}]) & Q(active=False)`).update({ active: true }));
    }
  });

  it('answers 404 for an unknown model and 400 for an unknown field', async () => {
    const model = await t.api('POST', '/api/fetch/NoSuchModel/1', {});
    expect(model.statusCode).toBe(404);
    expect(model.json()).toMatchObject({ detail: "Model 'NoSuchModel' does not exist", error: 'NotFound' });
    const field = await t.api('POST', `/api/fetch/ProjectTask/${ids.parent}`, { fields: ['nope'] });
    expect(field.statusCode).toBe(400);
    expect(field.json()).toMatchObject({ detail: "Unknown field 'nope' on model ProjectTask in path 'nope'", error: 'BadRequest' });
  });

  it('takes no `related` parameter: unknown body keys change nothing', async () => {
    const plain = await t.api('POST', `/api/fetch/ProjectTask/${ids.parent}`, { fields: ['name'] });
    const withRelated = await t.api('POST', `/api/fetch/ProjectTask/${ids.parent}`, { fields: ['name'], related: ['stage'] });
    expect(withRelated.statusCode).toBe(200);
    expect(withRelated.json()).toEqual(plain.json());
  });
});
