/**
 * POST /api/query/{model} (spec §4.2, ARCHITECTURE §4, §9): field paths, filters, ordering,
 * paging, name search, counting, footer aggregates and grouping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../src/api/record-reads.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
const ids = {} as {
  alice: number; bob: number; red: number; blue: number; main: number; bulk: number;
  stNew: number; stProgress: number; stDone: number;
  a: number; b: number; c: number; archived: number; bulkTasks: number[];
};

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    const stage = async (name: string) => (await ProjectStage.query({ name }).first())!.id;
    ids.stNew = await stage('New');
    ids.stProgress = await stage('In Progress');
    ids.stDone = await stage('Done');
    const [alice, bob] = await Contact.create_many([{ name: 'Alice' }, { name: 'Bob' }]);
    ids.alice = alice!.id;
    ids.bob = bob!.id;
    const [red, blue] = await ProjectTag.create_many([{ name: 'red' }, { name: 'blue' }]);
    ids.red = red!.id;
    ids.blue = blue!.id;
    ids.main = (await ProjectProject.create({ name: 'Main' })).id;
    ids.bulk = (await ProjectProject.create({ name: 'Bulk' })).id;
    const [a, b, c, archived] = await ProjectTask.create_many([
      { name: 'Write alpha report', project: ids.main, stage: ids.stNew, deadline: '2030-01-03', tags: [ids.red, ids.blue], assignee: ids.alice, planned_hours: 3, priority: '1' },
      { name: 'Review beta plan', project: ids.main, stage: ids.stDone, deadline: '2030-01-01', tags: [], planned_hours: 5, priority: '0' },
      { name: 'Alpha beta launch', project: ids.main, stage: ids.stProgress, deadline: '2030-01-02', tags: [ids.blue], assignee: ids.bob, planned_hours: 7, priority: '1' },
      { name: 'Archived alpha beta', project: ids.main, stage: ids.stNew, active: false, planned_hours: 100 },
    ]);
    ids.a = a!.id;
    ids.b = b!.id;
    ids.c = c!.id;
    ids.archived = archived!.id;
    const bulk = await ProjectTask.create_many(
      Array.from({ length: 85 }, (_, i) => ({ name: `Bulk ${String(i).padStart(3, '0')}`, project: ids.bulk, sequence: i })),
    );
    ids.bulkTasks = bulk.map((r) => r.id);
  });
});
afterAll(async () => { await t?.close(); });

const MAIN = () => `Q(project=${ids.main})`;
const BULK = () => `Q(project=${ids.bulk})`;

async function query(body: unknown) {
  const res = await t.api('POST', '/api/query/ProjectTask', body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('fields', () => {
  it('drills into ManyToOne and ManyToMany along nested paths', async () => {
    const data = await query({ filter_str: MAIN(), fields: ['name', 'stage.name', 'tags.name', 'assignee.name'], order_by: ['deadline ASC'] });
    expect(data).toEqual([
      {
        id: ids.b, display_name: 'Review beta plan', name: 'Review beta plan',
        stage: { id: ids.stDone, display_name: 'Done', name: 'Done' },
        tags: [],
        assignee: null,
      },
      {
        id: ids.c, display_name: 'Alpha beta launch', name: 'Alpha beta launch',
        stage: { id: ids.stProgress, display_name: 'In Progress', name: 'In Progress' },
        tags: [{ id: ids.blue, display_name: 'blue', name: 'blue' }],
        assignee: { id: ids.bob, display_name: 'Bob', name: 'Bob' },
      },
      {
        id: ids.a, display_name: 'Write alpha report', name: 'Write alpha report',
        stage: { id: ids.stNew, display_name: 'New', name: 'New' },
        // ProjectTag orders by name: blue before red.
        tags: [{ id: ids.blue, display_name: 'blue', name: 'blue' }, { id: ids.red, display_name: 'red', name: 'red' }],
        assignee: { id: ids.alice, display_name: 'Alice', name: 'Alice' },
      },
    ]);
  });

  it('returns a bare relation as {id, display_name} (or null) and a to-many as an array of them', async () => {
    const data = await query({ filter_str: `Q(id__in=[${ids.a}, ${ids.b}])`, fields: ['assignee', 'tags', 'project'], order_by: ['id ASC'] });
    expect(data).toEqual([
      {
        id: ids.a, display_name: 'Write alpha report',
        assignee: { id: ids.alice, display_name: 'Alice' },
        tags: [{ id: ids.blue, display_name: 'blue' }, { id: ids.red, display_name: 'red' }],
        project: { id: ids.main, display_name: 'Main' },
      },
      { id: ids.b, display_name: 'Review beta plan', assignee: null, tags: [], project: { id: ids.main, display_name: 'Main' } },
    ]);
  });

  it('reads reverse relations (OneToMany) and two levels deep', async () => {
    const res = await t.api('POST', '/api/query/ProjectProject', {
      filter_str: `Q(id=${ids.main})`, fields: ['name', 'tasks.name', 'tasks.stage.name'],
    });
    expect(res.statusCode, res.body).toBe(200);
    const [project] = res.json();
    expect(project.name).toBe('Main');
    // Only active tasks are listed (the archived one is left out), each with its stage.
    expect(project.tasks.map((x: any) => x.id).sort()).toEqual([ids.a, ids.b, ids.c].sort());
    expect(project.tasks.find((x: any) => x.id === ids.c)).toEqual({
      id: ids.c, display_name: 'Alpha beta launch', name: 'Alpha beta launch',
      stage: { id: ids.stProgress, display_name: 'In Progress', name: 'In Progress' },
    });
  });

  it('without fields returns every stored field plus display_name, relations as {id, display_name}', async () => {
    const [rec] = await query({ filter_str: `Q(id=${ids.c})` });
    expect(rec).toMatchObject({
      id: ids.c, display_name: 'Alpha beta launch', name: 'Alpha beta launch', deadline: '2030-01-02', priority: '1',
      planned_hours: 7, remaining_hours: 7, active: true, identifier: null,
      stage: { id: ids.stProgress, display_name: 'In Progress' },
      assignee: { id: ids.bob, display_name: 'Bob' },
      parent: null,
    });
    expect(Object.keys(rec)).not.toContain('tags'); // to-many relations are not stored fields
  });

  it('refuses an unknown field path with a 400 naming it', async () => {
    const res = await t.api('POST', '/api/query/ProjectTask', { fields: ['name', 'stage.nope'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: "Unknown field 'nope' on model ProjectStage in path 'stage.nope'", error: 'BadRequest' });
    const scalar = await t.api('POST', '/api/query/ProjectTask', { fields: ['name.length'] });
    expect(scalar.statusCode).toBe(400);
    expect(scalar.json()).toMatchObject({ detail: "'name' is not a relation; cannot read 'length' through it", error: 'BadRequest' });
  });
});

describe('filter_str and archived records', () => {
  const names = (data: any[]) => data.map((r) => r.name);

  it('filters through relations and lookups', async () => {
    expect(names(await query({ filter_str: `${MAIN()} & Q(stage__name='Done')`, fields: ['name'] }))).toEqual(['Review beta plan']);
    expect(names(await query({ filter_str: `Q(stage__id=${ids.stProgress})`, fields: ['name'] }))).toEqual(['Alpha beta launch']);
    expect(names(await query({ filter_str: `${MAIN()} & Q(deadline__lt='2030-01-03')`, fields: ['name'], order_by: ['deadline ASC'] })))
      .toEqual(['Review beta plan', 'Alpha beta launch']);
    expect(names(await query({ filter_str: `Q(assignee__name__icontains='ALI') | Q(assignee__name='Bob')`, fields: ['name'], order_by: ['name ASC'] })))
      .toEqual(['Alpha beta launch', 'Write alpha report']);
  });

  it('matches to-many relations without duplicating rows', async () => {
    // Task a has both tags: it must appear once.
    const data = await query({ filter_str: "Q(tags__name__in=['red', 'blue'])", fields: ['name'], order_by: ['name ASC'] });
    expect(names(data)).toEqual(['Alpha beta launch', 'Write alpha report']);
    expect(names(await query({ filter_str: `${MAIN()} & Q(tags__isnull=True)`, fields: ['name'] }))).toEqual(['Review beta plan']);
  });

  it('lists only active records unless the filter names active', async () => {
    expect(names(await query({ filter_str: MAIN(), fields: ['name'], order_by: ['name ASC'] })))
      .toEqual(['Alpha beta launch', 'Review beta plan', 'Write alpha report']);
    expect(names(await query({ filter_str: `${MAIN()} & Q(active__in=[True, False])`, fields: ['name'], order_by: ['name ASC'] })))
      .toEqual(['Alpha beta launch', 'Archived alpha beta', 'Review beta plan', 'Write alpha report']);
    expect(names(await query({ filter_str: `${MAIN()} & Q(active=False)`, fields: ['name'] }))).toEqual(['Archived alpha beta']);
  });
});

describe('order_by', () => {
  it('orders by a field ascending and descending', async () => {
    const asc = await query({ filter_str: MAIN(), fields: ['name'], order_by: ['deadline ASC'] });
    expect(asc.map((r: any) => r.id)).toEqual([ids.b, ids.c, ids.a]);
    const desc = await query({ filter_str: MAIN(), fields: ['name'], order_by: ['deadline DESC'] });
    expect(desc.map((r: any) => r.id)).toEqual([ids.a, ids.c, ids.b]);
  });

  it('orders through a relation (stage__sequence DESC)', async () => {
    const data = await query({ filter_str: MAIN(), fields: ['stage.sequence'], order_by: ['stage__sequence DESC'] });
    // Done (40), In Progress (20), New (10).
    expect(data.map((r: any) => r.id)).toEqual([ids.b, ids.c, ids.a]);
    expect(data.map((r: any) => r.stage.sequence)).toEqual([40, 20, 10]);
    const asc = await query({ filter_str: MAIN(), fields: ['name'], order_by: ['stage__sequence ASC'] });
    expect(asc.map((r: any) => r.id)).toEqual([ids.a, ids.c, ids.b]);
  });

  it('refuses an unknown or malformed ordering entry', async () => {
    const unknown = await t.api('POST', '/api/query/ProjectTask', { order_by: ['nope ASC'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ detail: "Unknown field 'nope' on model ProjectTask", error: 'QuerySyntaxError' });
    const bad = await t.api('POST', '/api/query/ProjectTask', { order_by: ['name SIDEWAYS'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ detail: "Invalid ordering entry 'name SIDEWAYS': expected '<field> ASC|DESC'", error: 'QuerySyntaxError' });
  });
});

describe('limit and page', () => {
  it(`defaults to ${DEFAULT_LIMIT} records`, async () => {
    expect(DEFAULT_LIMIT).toBe(80);
    const data = await query({ filter_str: BULK(), fields: ['name'] });
    expect(data).toHaveLength(80);
    expect(data.map((r: any) => r.id)).toEqual(ids.bulkTasks.slice(0, 80));
  });

  it(`accepts up to MAX_LIMIT (${MAX_LIMIT}) and refuses more`, async () => {
    expect(await query({ filter_str: BULK(), fields: ['name'], limit: MAX_LIMIT })).toHaveLength(85);
    expect(await query({ filter_str: BULK(), fields: ['name'], limit: 5 })).toHaveLength(5);
    for (const limit of [MAX_LIMIT + 1, 0, -1, 2.5, '10']) {
      const res = await t.api('POST', '/api/query/ProjectTask', { limit });
      expect(res.statusCode, `limit ${limit}`).toBe(400);
      expect(res.json()).toMatchObject({ detail: `'limit' must be an integer from 1 to ${MAX_LIMIT}`, error: 'BadRequest' });
    }
  });

  it('pages are 1-based', async () => {
    const page1 = await query({ filter_str: BULK(), fields: ['name'], limit: 30, page: 1 });
    const page3 = await query({ filter_str: BULK(), fields: ['name'], limit: 30, page: 3 });
    const page4 = await query({ filter_str: BULK(), fields: ['name'], limit: 30, page: 4 });
    expect(page1.map((r: any) => r.id)).toEqual(ids.bulkTasks.slice(0, 30));
    expect(page3.map((r: any) => r.id)).toEqual(ids.bulkTasks.slice(60, 85));
    expect(page4).toEqual([]);
    const zero = await t.api('POST', '/api/query/ProjectTask', { page: 0 });
    expect(zero.statusCode).toBe(400);
    expect(zero.json()).toMatchObject({ detail: "'page' must be an integer from 1 to 1000000", error: 'BadRequest' });
  });
});

describe('name_search', () => {
  it('ANDs its terms (case-insensitive, against the name)', async () => {
    const one = await query({ name_search: ['alpha'], fields: ['name'], order_by: ['name ASC'] });
    expect(one.map((r: any) => r.name)).toEqual(['Alpha beta launch', 'Write alpha report']);
    const both = await query({ name_search: ['alpha', 'BETA'], fields: ['name'] });
    expect(both.map((r: any) => r.name)).toEqual(['Alpha beta launch']);
    const none = await query({ name_search: ['alpha', 'beta', 'gamma'], fields: ['name'] });
    expect(none).toEqual([]);
  });

  it('combines with filter_str and treats LIKE wildcards literally', async () => {
    const data = await query({ name_search: ['beta'], filter_str: `Q(stage=${ids.stDone})`, fields: ['name'] });
    expect(data.map((r: any) => r.name)).toEqual(['Review beta plan']);
    expect(await query({ name_search: ['%'], fields: ['name'] })).toEqual([]);
    expect(await query({ name_search: ['_'], fields: ['name'] })).toEqual([]);
  });
});

describe('response shape', () => {
  it('is a bare array by default, never with a total', async () => {
    const res = await t.api('POST', '/api/query/ProjectTask', { filter_str: MAIN(), fields: ['name'] });
    expect(res.statusCode).toBe(200);
    expect(Array.isArray(res.json())).toBe(true);
    expect(res.body).not.toContain('"total"');
  });

  it('is {count, data} with counter: true, count over all matches rather than the page', async () => {
    const body = await query({ filter_str: BULK(), fields: ['name'], limit: 10, page: 2, counter: true });
    expect(Object.keys(body).sort()).toEqual(['count', 'data']);
    expect(body.count).toBe(85);
    expect(body.data.map((r: any) => r.id)).toEqual(ids.bulkTasks.slice(10, 20));
    const filtered = await query({ name_search: ['alpha'], counter: true, limit: 1, fields: ['name'] });
    expect(filtered.count).toBe(2);
    expect(filtered.data).toHaveLength(1);
  });

  it('counter: false keeps the bare array', async () => {
    const body = await query({ filter_str: MAIN(), fields: ['name'], counter: false });
    expect(Array.isArray(body)).toBe(true);
  });

  it('adds aggregates over all matches with footer_aggregates', async () => {
    const body = await query({ filter_str: MAIN(), fields: ['name'], limit: 1, footer_aggregates: ['planned_hours'] });
    expect(Object.keys(body).sort()).toEqual(['aggregates', 'count', 'data']);
    // 3 + 5 + 7 = 15: the archived task (100 h) is not a match, the page size does not matter.
    expect(body).toEqual({ count: 3, data: [expect.objectContaining({ name: expect.any(String) })], aggregates: { planned_hours: 15 } });
    expect(JSON.stringify(body)).not.toContain('"total"');
  });

  it('refuses an aggregate of a non-numeric or unknown field', async () => {
    const text = await t.api('POST', '/api/query/ProjectTask', { footer_aggregates: ['name'] });
    expect(text.statusCode).toBe(400);
    expect(text.json()).toMatchObject({ detail: "Cannot sum 'name': it is a Char field", error: 'BadRequest' });
    const unknown = await t.api('POST', '/api/query/ProjectTask', { footer_aggregates: ['nope'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ detail: "Cannot aggregate 'nope': not a stored field of ProjectTask", error: 'BadRequest' });
  });
});

describe('group_fields', () => {
  it('groups by a ManyToOne as {id, display_name} with count and aggregates', async () => {
    const groups = await query({ filter_str: MAIN(), group_fields: ['stage'], footer_aggregates: ['planned_hours'] });
    expect(groups).toEqual({
      count: 3,
      data: [
        { stage: { id: ids.stNew, display_name: 'New' }, count: 1, aggregates: { planned_hours: 3 } },
        { stage: { id: ids.stProgress, display_name: 'In Progress' }, count: 1, aggregates: { planned_hours: 7 } },
        { stage: { id: ids.stDone, display_name: 'Done' }, count: 1, aggregates: { planned_hours: 5 } },
      ],
      aggregates: { planned_hours: 15 },
    });
  });

  it('groups by a scalar as a bare array; with counter the top-level count counts records, not groups', async () => {
    const bare = await query({ filter_str: MAIN(), group_fields: ['priority'] });
    expect(bare).toEqual([
      { priority: '0', count: 1, aggregates: {} },
      { priority: '1', count: 2, aggregates: {} },
    ]);
    const counted = await query({ filter_str: MAIN(), group_fields: ['priority'], counter: true });
    expect(counted).toEqual({ count: 3, data: bare });
  });

  it('puts records without a value in a null group', async () => {
    const groups = await query({ filter_str: MAIN(), group_fields: ['assignee'] });
    expect(groups).toEqual([
      { assignee: { id: ids.alice, display_name: 'Alice' }, count: 1, aggregates: {} },
      { assignee: { id: ids.bob, display_name: 'Bob' }, count: 1, aggregates: {} },
      { assignee: null, count: 1, aggregates: {} },
    ]);
  });

  it('refuses a field that cannot be grouped', async () => {
    const res = await t.api('POST', '/api/query/ProjectTask', { group_fields: ['tags'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: "Cannot group by 'tags': not a groupable stored field of ProjectTask", error: 'BadRequest' });
  });
});

describe('parameter types', () => {
  it('answers 400 naming the key for wrongly typed parameters', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ fields: 'name' }, "'fields' must be an array of strings"],
      [{ filter_str: 42 }, "'filter_str' must be a string"],
      [{ order_by: 'name ASC' }, "'order_by' must be an array of strings"],
      [{ name_search: 'alpha' }, "'name_search' must be an array of strings"],
      [{ counter: 'yes' }, "'counter' must be true or false"],
      [{ group_fields: [1] }, "'group_fields' must be an array of strings"],
    ];
    for (const [body, detail] of cases) {
      const res = await t.api('POST', '/api/query/ProjectTask', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ detail, error: 'BadRequest' });
    }
  });

  it('an unknown model is a 404', async () => {
    const res = await t.api('POST', '/api/query/NoSuchModel', {});
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ detail: "Model 'NoSuchModel' does not exist", error: 'NotFound' });
  });
});
