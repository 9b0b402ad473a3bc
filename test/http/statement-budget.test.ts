/**
 * No N+1 (ARCHITECTURE §4, read-records.ts): reading relations along field paths costs one
 * statement per relation of the tree, whatever the number of records. Counted with
 * `t.countStatements`, which sees every statement the test database executes — including the
 * one that checks the credential and the install flag.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * Query: credential/flag check + tasks + assignees + tags + stages.
 * Observed: 5 (read routes run without BEGIN/COMMIT).
 */
const QUERY_STATEMENTS = 5;
/** Fetch: credential/flag check + task + subtasks + their assignees + tags + stages. Observed: 6. */
const FETCH_STATEMENTS = 6;

let t: TestDatabase;
let parentFew: number;
let parentMany: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    const stages = await ProjectStage.query().ids();
    const tags = (await ProjectTag.create_many(Array.from({ length: 10 }, (_, i) => ({ name: `budget tag ${i}` })))).map((r) => r.id);
    const contacts = (await Contact.create_many(Array.from({ length: 55 }, (_, i) => ({ name: `Assignee ${i}` })))).map((r) => r.id);
    const task = (i: number, extra: Record<string, unknown> = {}) => ({
      name: `Budget task ${String(i).padStart(2, '0')}`,
      assignee: contacts[i % contacts.length],
      stage: stages[i % stages.length],
      tags: [tags[i % 10], tags[(i + 1) % 10]],
      ...extra,
    });
    await ProjectTask.create_many(Array.from({ length: 50 }, (_, i) => task(i)));
    parentFew = (await ProjectTask.create({ name: 'Parent of 5' })).id;
    parentMany = (await ProjectTask.create({ name: 'Parent of 50' })).id;
    await ProjectTask.create_many(Array.from({ length: 5 }, (_, i) => task(i, { name: `Few ${i}`, parent: parentFew })));
    await ProjectTask.create_many(Array.from({ length: 50 }, (_, i) => task(i, { name: `Many ${i}`, parent: parentMany })));
  });
  // Warm the registry cache so it is not counted.
  await t.api('POST', '/api/query/ProjectTask', { limit: 1 });
});
afterAll(async () => { await t?.close(); });

const FIELDS = ['name', 'assignee.name', 'tags.name', 'stage.name'];

async function countedQuery(limit: number) {
  let body: any;
  const counted = await t.countStatements(async () => {
    const res = await t.api('POST', '/api/query/ProjectTask', { fields: FIELDS, filter_str: "Q(name__startswith='Budget task')", limit });
    expect(res.statusCode, res.body).toBe(200);
    body = res.json();
  });
  return { ...counted, body };
}

describe('statement budget', () => {
  it('a query of 5 or 50 tasks with assignee, tags and stage costs the same small number of statements', async () => {
    const few = await countedQuery(5);
    const many = await countedQuery(50);
    expect(few.body).toHaveLength(5);
    expect(many.body).toHaveLength(50);
    // Every relation really was read.
    for (const rec of many.body) {
      expect(rec.assignee).toEqual({ id: expect.any(Number), display_name: expect.stringMatching(/^Assignee /), name: expect.stringMatching(/^Assignee /) });
      expect(rec.tags).toHaveLength(2);
      expect(rec.stage).toEqual({ id: expect.any(Number), display_name: expect.any(String), name: expect.any(String) });
    }
    expect(few.count, few.statements.join('\n')).toBe(QUERY_STATEMENTS);
    expect(many.count, many.statements.join('\n')).toBe(QUERY_STATEMENTS);
  });

  it('counting and footer aggregates add one statement each, not one per record', async () => {
    const counted = await t.countStatements(async () => {
      const res = await t.api('POST', '/api/query/ProjectTask', { fields: FIELDS, filter_str: "Q(name__startswith='Budget task')", limit: 50, counter: true, footer_aggregates: ['planned_hours'] });
      expect(res.statusCode).toBe(200);
      expect(res.json().count).toBe(50);
    });
    expect(counted.count, counted.statements.join('\n')).toBe(QUERY_STATEMENTS + 2);
  });

  it('a fetch of a task with 5 or 50 subtasks (each with assignee, tags, stage) costs the same', async () => {
    const fields = ['name', 'subtasks.name', 'subtasks.assignee.name', 'subtasks.tags.name', 'subtasks.stage.name'];
    const fetchCounted = async (id: number) => {
      let body: any;
      const counted = await t.countStatements(async () => {
        const res = await t.api('POST', `/api/fetch/ProjectTask/${id}`, { fields });
        expect(res.statusCode, res.body).toBe(200);
        body = res.json();
      });
      return { ...counted, body };
    };
    const few = await fetchCounted(parentFew);
    const many = await fetchCounted(parentMany);
    expect(few.body.subtasks).toHaveLength(5);
    expect(many.body.subtasks).toHaveLength(50);
    for (const sub of many.body.subtasks) {
      expect(sub.assignee.name).toMatch(/^Assignee /);
      expect(sub.tags).toHaveLength(2);
      expect(sub.stage.name).toEqual(expect.any(String));
    }
    expect(few.count, few.statements.join('\n')).toBe(FETCH_STATEMENTS);
    expect(many.count, many.statements.join('\n')).toBe(FETCH_STATEMENTS);
  });

  it('grouping by a relation costs the same for few and many groups', async () => {
    const group = async (filter: string) => t.countStatements(async () => {
      const res = await t.api('POST', '/api/query/ProjectTask', { group_fields: ['assignee'], filter_str: filter });
      expect(res.statusCode, res.body).toBe(200);
    });
    const few = await group("Q(name__startswith='Few')");
    const many = await group("Q(name__startswith='Many')");
    // Credential check + grouped select + one name lookup for the assignees.
    expect(few.count, few.statements.join('\n')).toBe(3);
    expect(many.count, many.statements.join('\n')).toBe(3);
  });
});
