/**
 * No N+1 (ARCHITECTURE §4, read-records.ts): reading relations along field paths costs a fixed
 * number of statements, whatever the number of records (plain relations are read by the same
 * SELECT; the others with one statement per relation of the tree). Counted with
 * `t.countStatements`, which sees every statement the test database executes — including the
 * credential check. The key is warm (the worker remembers it), so the check rides in the first
 * statement (`auth/request-guard.ts`): a SELECT list or a write's RETURNING clause.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { buildApp } from '../../src/http/app.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { READ_GUARD, WRITE_GUARD, carriesGuard } from '../support/guard-text.js';

/**
 * Query: one SELECT that checks the credential and renders assignees, tags and stages as JSON
 * (read routes run without BEGIN/COMMIT).
 */
const QUERY_STATEMENTS = 1;
/** Fetch: one SELECT that checks the credential, with the subtasks and their relations nested. */
const FETCH_STATEMENTS = 1;

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
  // Warm the registry and the remembered credential so they are not counted.
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
    expect(many.statements[0]).toMatch(READ_GUARD);
  });

  it('a key this worker has not seen yet costs three look-up statements more, once', async () => {
    const worker = await buildApp(t.platform);
    try {
      const ask = () => t.countStatements(async () => {
        const res = await worker.inject({
          method: 'POST', url: '/api/query/ProjectTask',
          headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
          payload: JSON.stringify({ fields: FIELDS, filter_str: "Q(name__startswith='Budget task')", limit: 5 }),
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toHaveLength(5);
      });
      const cold = await ask();
      // The key look-up, then the account's groups/companies and its rights/rules.
      expect(cold.count, cold.statements.join('\n')).toBe(QUERY_STATEMENTS + 3);
      expect(cold.statements[0]).toMatch(/FROM ff_state/);
      expect(carriesGuard(cold.statements[3]!)).toBe(false);
      const warm = await ask();
      expect(warm.count, warm.statements.join('\n')).toBe(QUERY_STATEMENTS);
    } finally {
      await worker.close();
    }
  });

  it('the count rides in the page\'s statement; footer aggregates add one statement, not one per record', async () => {
    const query = { fields: FIELDS, filter_str: "Q(name__startswith='Budget task')", limit: 50 };
    const counted = await t.countStatements(async () => {
      const res = await t.api('POST', '/api/query/ProjectTask', { ...query, counter: true });
      expect(res.statusCode).toBe(200);
      expect(res.json().count).toBe(50);
      expect(res.json().data).toHaveLength(50);
    });
    expect(counted.count, counted.statements.join('\n')).toBe(QUERY_STATEMENTS);
    const withFooter = await t.countStatements(async () => {
      const res = await t.api('POST', '/api/query/ProjectTask', { ...query, counter: true, footer_aggregates: ['planned_hours'] });
      expect(res.statusCode).toBe(200);
      expect(res.json().count).toBe(50);
    });
    expect(withFooter.count, withFooter.statements.join('\n')).toBe(QUERY_STATEMENTS + 1);
  });

  it('counts every page: a middle page, an empty first page (no match) and a page beyond the end', async () => {
    const count = async (body: Record<string, unknown>) => {
      let answer: any;
      const counted = await t.countStatements(async () => {
        const res = await t.api('POST', '/api/query/ProjectTask', { fields: ['name'], counter: true, ...body });
        expect(res.statusCode, res.body).toBe(200);
        answer = res.json();
      });
      return { ...answer, statements: counted.count, statementTexts: counted.statements };
    };
    const middle = await count({ filter_str: "Q(name__startswith='Budget task')", limit: 20, page: 2 });
    expect(middle.count).toBe(50);
    expect(middle.data).toHaveLength(20);
    expect(middle.statements).toBe(QUERY_STATEMENTS);
    const none = await count({ filter_str: "Q(name='no task has this name')", limit: 20 });
    expect(none).toMatchObject({ count: 0, data: [] });
    // No count statement; the one more is the request guard's own check, which an empty answer
    // cannot carry (auth/request-guard.ts), as for any query that matches nothing.
    expect(none.statements).toBe(QUERY_STATEMENTS + 1);
    expect(none.statementTexts.some((text: string) => /^SELECT count\(\*\)/.test(text))).toBe(false);
    // Nothing on the page to carry the count: it is asked for on its own.
    const beyond = await count({ filter_str: "Q(name__startswith='Budget task')", limit: 20, page: 4 });
    expect(beyond).toMatchObject({ count: 50, data: [] });
    expect(beyond.statements).toBe(QUERY_STATEMENTS + 1);
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

  it('creating a task in a project is one INSERT carrying its computed fields', async () => {
    const projectId = await t.run(async () => (await ProjectProject.create({ name: 'Budget project' })).id);
    // With its stage: a task created without one looks the first stage up first (its default).
    const stage = (await t.api('POST', '/api/query/ProjectStage', { fields: ['id'], limit: 1 })).json()[0].id;
    let body: any;
    const counted = await t.countStatements(async () => {
      const res = await t.api('POST', '/api/create/ProjectTask', { name: 'Budget created', project: projectId, stage, planned_hours: 8, effective_hours: 3 });
      expect(res.statusCode, res.body).toBe(200);
      body = res.json();
    });
    // BEGIN, INSERT … RETURNING (carrying the credential check), the creator following the task
    // (one INSERT, messaging's chatter), COMMIT: no reload, no recompute UPDATE.
    expect(counted.count, counted.statements.join('\n')).toBe(4);
    expect(counted.statements[1]).toMatch(/^INSERT INTO "project_task"/);
    expect(counted.statements[1]).toMatch(WRITE_GUARD);
    expect(counted.statements[2]).toMatch(/^INSERT INTO "followers"/);
    expect(body).toEqual({ id: expect.any(Number), name: 'Budget created', display_name: 'Budget created' });
    const [stored] = await t.run(() => ProjectTask.query({ id: body.id }).read(['remaining_hours', 'subtask_count', 'project.task_count']));
    expect(stored).toMatchObject({ remaining_hours: 5, subtask_count: 0, project: { id: projectId, task_count: 1 } });
  });

  it('listing 2 or 20 projects with their task counts costs the same', async () => {
    const projects = await t.run(async () => {
      const created = await ProjectProject.create_many(Array.from({ length: 20 }, (_, i) => ({ name: `Counted ${String(i).padStart(2, '0')}` })));
      await ProjectTask.create_many(created.flatMap((p, i) => Array.from({ length: i % 4 }, (_, k) => ({ name: `counted task ${k}`, project: p.id }))));
      // An archived task is not counted.
      await ProjectTask.create({ name: 'archived counted task', project: created[3]!.id, active: false });
      return created.map((p) => p.id);
    });
    const list = (limit: number) => t.countStatements(async () => {
      const res = await t.api('POST', '/api/query/ProjectProject', { fields: ['name', 'task_count'], filter_str: "Q(name__startswith='Counted')", limit });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().map((p: any) => p.task_count)).toEqual(Array.from({ length: limit }, (_, i) => i % 4));
    });
    const few = await list(2);
    const many = await list(20);
    expect(projects).toHaveLength(20);
    // The projects (with the credential check), their records for the compute, one grouped count.
    expect(few.count, few.statements.join('\n')).toBe(3);
    expect(many.count, many.statements.join('\n')).toBe(3);
  });

  it('grouping by a relation costs the same for few and many groups', async () => {
    const group = async (filter: string) => t.countStatements(async () => {
      const res = await t.api('POST', '/api/query/ProjectTask', { group_fields: ['assignee'], filter_str: filter });
      expect(res.statusCode, res.body).toBe(200);
    });
    const few = await group("Q(name__startswith='Few')");
    const many = await group("Q(name__startswith='Many')");
    // Grouped select (with the credential check) + one name lookup for the assignees.
    expect(few.count, few.statements.join('\n')).toBe(2);
    expect(many.count, many.statements.join('\n')).toBe(2);
  });
});
