/**
 * The bulk routes (CONTRACTS C1): bulk-create, bulk-update (each record its own values, or one set
 * of values for a selection) and bulk-delete, with the answers C1 fixes, the write-key rules of
 * spec §4.4 per item, `item <index>: ` refusals (values, lines, links, unique keys — inside the
 * call and against stored records) with nothing written, and FF_BULK_MAX. The cost of each route
 * is proven flat in `bulk-statements.test.ts`; selections under a restricted key in
 * `selections.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { buildApp } from '../../src/http/app.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let stages: number[];
const tags: Record<string, number> = {};

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    stages = await ProjectStage.query().ids();
    for (const name of ['red', 'green', 'blue']) tags[name] = (await ProjectTag.create({ name })).id;
  });
});
afterAll(async () => { await t?.close(); });

const count = (filter: string) => t.run(() => ProjectTask.query(filter).with_archived().count());

async function read(ids: number[], fields: string[]): Promise<Record<string, any>[]> {
  const res = await t.api('POST', '/api/query/ProjectTask', { fields, filter_str: `Q(id__in=[${ids.join(',')}]) & (Q(active=True) | Q(active=False))`, order_by: ['id ASC'] });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function expectItemError(res: { statusCode: number; json(): any; body: string }, index: number, detail: RegExp) {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json().detail).toMatch(new RegExp(`^item ${index}: `));
  expect(res.json().detail).toMatch(detail);
}

describe('bulk-create', () => {
  it('creates every item in one call and answers [{id, name, display_name}] in the body\'s order, with links, lines and computed fields', async () => {
    const res = await t.api('POST', '/api/bulk-create/ProjectTask', [
      { name: 'BC zulu', planned_hours: 8, effective_hours: 3, tags: [tags.red, tags.blue], stage: stages[1] },
      { name: 'BC alpha', subtasks: [{ name: 'BC alpha.1', planned_hours: 2 }, { name: 'BC alpha.2' }] },
      { name: 'BC mike', priority: '2', tags: [tags.green] },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json();
    expect(answer.map((r: any) => r.name)).toEqual(['BC zulu', 'BC alpha', 'BC mike']);
    for (const r of answer) expect(r).toEqual({ id: expect.any(Number), name: r.name, display_name: r.name });
    const rows = await read(answer.map((r: any) => r.id), ['name', 'remaining_hours', 'tags.name', 'stage', 'priority', 'subtasks.name', 'subtask_count']);
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName['BC zulu']).toMatchObject({ remaining_hours: 5, stage: { id: stages[1] }, subtask_count: 0 });
    expect(byName['BC zulu'].tags.map((t: any) => t.name).sort()).toEqual(['blue', 'red']);
    expect(byName['BC alpha'].subtasks.map((s: any) => s.name)).toEqual(['BC alpha.1', 'BC alpha.2']);
    // The stored count follows the lines written with the parent.
    expect(byName['BC alpha'].subtask_count).toBe(2);
    expect(byName['BC mike']).toMatchObject({ priority: '2', tags: [{ name: 'green' }] });
  });

  it('applies the write-key rules of spec §4.4 to each item: unknown and unsettable keys are ignored', async () => {
    const res = await t.api('POST', '/api/bulk-create/ProjectTask', [
      { name: 'BC keys', no_such_field: 1, id: 999999, remaining_hours: 77, created_by: 1, display_name: 'x', identifier: 'bulk.keys' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const [row] = await read([res.json()[0].id], ['name', 'remaining_hours', 'identifier']);
    expect(row).toMatchObject({ name: 'BC keys', remaining_hours: 0, identifier: 'bulk.keys' });
    expect(res.json()[0].id).not.toBe(999999);
  });

  it('a bad item refuses the whole call as `item <index>: …` and writes nothing', async () => {
    const before = await count("Q(name__startswith='BC bad')");
    const cases: [unknown[], number, RegExp][] = [
      [[{ name: 'BC bad 0' }, { name: 'BC bad 1' }, { name: 'BC bad 2', priority: '9' }], 2, /priority/],
      [[{ name: 'BC bad 0' }, { priority: '1' }], 1, /'name' of Task is required/],
      [[{ name: 'BC bad 0' }, 'not an object'], 1, /object of field values/],
      // A line's error names its parent's item.
      [[{ name: 'BC bad 0' }, { name: 'BC bad 1', subtasks: [{ name: 'ok' }, { priority: '1' }] }], 1, /'name' of Task is required/],
      // A ManyToMany id that does not exist, and a ManyToOne one (refused by the foreign key).
      [[{ name: 'BC bad 0', tags: [tags.red] }, { name: 'BC bad 1' }, { name: 'BC bad 2', tags: [tags.red, 99999999] }], 2, /ProjectTag 99999999 does not exist/],
      [[{ name: 'BC bad 0', stage: stages[0] }, { name: 'BC bad 1', stage: 99999999 }], 1, /'stage'.*99999999 does not exist/],
    ];
    for (const [body, index, detail] of cases) {
      expectItemError(await t.api('POST', '/api/bulk-create/ProjectTask', body), index, detail);
    }
    expect(await count("Q(name__startswith='BC bad')")).toBe(before);
    expect(await count("Q(name='ok')")).toBe(0);
  });

  it('names the item of a unique violation, inside the call and against a stored record, and writes nothing', async () => {
    const tagCount = () => t.run(() => ProjectTag.query().count());
    const before = await tagCount();
    const inside = await t.api('POST', '/api/bulk-create/ProjectTag', [{ name: 'BC u1' }, { name: 'BC u2' }, { name: 'BC u1' }]);
    expectItemError(inside, 2, /'name' must be unique; item 0 has the same value/);
    const stored = await t.api('POST', '/api/bulk-create/ProjectTag', [{ name: 'BC u3' }, { name: 'BC u4' }, { name: 'green' }, { name: 'BC u5' }]);
    expectItemError(stored, 2, /'name' must be unique/);
    expect(await tagCount()).toBe(before);
  });

  it('refuses a body that is not a bare array', async () => {
    for (const body of [{}, { name: 'x' }, 'x', null]) {
      const res = await t.api('POST', '/api/bulk-create/ProjectTask', body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().detail).toMatch(/bare array/);
    }
  });

  it('an empty array creates nothing and answers []', async () => {
    const res = await t.api('POST', '/api/bulk-create/ProjectTask', []);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
  });
});

describe('bulk-update', () => {
  let ids: number[];
  beforeAll(async () => {
    const res = await t.api('POST', '/api/bulk-create/ProjectTask', [
      { name: 'BU one', planned_hours: 10, tags: [tags.red] },
      { name: 'BU two', planned_hours: 10 },
      { name: 'BU three', planned_hours: 10, active: false },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    ids = res.json().map((r: any) => r.id);
  });

  it('writes each record its own values (some keys written by some items only) and recomputes each', async () => {
    const res = await t.api('PUT', '/api/bulk-update/ProjectTask', [
      { id: ids[1], name: 'BU two!', planned_hours: 4, effective_hours: 1 },
      { id: ids[0], priority: '2', tags: [tags.green, tags.blue] },
      // An archived record is reached by its id, as on the single routes.
      { id: ids[2], planned_hours: 2.5, created_by: 1, no_such_field: true },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ updated: 3, ids: [ids[1], ids[0], ids[2]] });
    const rows = await read(ids, ['name', 'priority', 'planned_hours', 'remaining_hours', 'tags.name']);
    expect(rows[0]).toMatchObject({ name: 'BU one', priority: '2', planned_hours: 10, remaining_hours: 10 });
    expect(rows[0]!.tags.map((x: any) => x.name).sort()).toEqual(['blue', 'green']);
    expect(rows[1]).toMatchObject({ name: 'BU two!', priority: '0', planned_hours: 4, remaining_hours: 3, tags: [] });
    expect(rows[2]).toMatchObject({ name: 'BU three', planned_hours: 2.5, remaining_hours: 2.5 });
  });

  it('writes one set of values to what a selection matches and answers {updated, ids} in the default order', async () => {
    const res = await t.api('PUT', '/api/bulk-update/ProjectTask', {
      selection: { filter_str: "Q(name__startswith='BU ')" }, vals: { sequence: 3, description: 'by selection', id: 5 },
    });
    expect(res.statusCode, res.body).toBe(200);
    // The archived task is not matched: the filter does not name `active`.
    const expected = await t.run(() => ProjectTask.query("Q(name__startswith='BU ')").ids());
    expect(res.json()).toEqual({ updated: 2, ids: expected });
    expect(expected.sort()).toEqual([ids[0], ids[1]].sort());
    const rows = await read(ids, ['sequence', 'description']);
    expect(rows.map((r) => r.description)).toEqual(['by selection', 'by selection', null]);
  });

  it('a bad item refuses the whole call as `item <index>: …` and writes nothing', async () => {
    const snapshot = await read(ids, ['name', 'priority', 'planned_hours']);
    const cases: [unknown, number, RegExp][] = [
      [[{ id: ids[0], name: 'changed' }, { id: ids[1], priority: 'nope' }], 1, /priority/],
      [[{ id: ids[0], name: 'changed' }, { name: 'no id' }], 1, /'id' must be a record id/],
      [[{ id: ids[0], name: 'changed' }, { id: ids[1], name: '' }], 1, /'name' of Task is required/],
      [[{ id: ids[0], name: 'changed' }, { id: ids[1], tags: [99999999] }], 1, /ProjectTag 99999999 does not exist/],
      [[{ id: ids[0], name: 'changed' }, { id: ids[1], stage: 99999999 }], 1, /'stage'.*does not exist/],
      [[{ id: ids[0], name: 'changed' }, { id: ids[1] }, { id: ids[0], name: 'twice' }], 2, /written twice.*item 0/],
      [[{ id: ids[0], name: 'changed' }, 7], 1, /'id' and its values/],
    ];
    for (const [body, index, detail] of cases) {
      expectItemError(await t.api('PUT', '/api/bulk-update/ProjectTask', body), index, detail);
    }
    expect(await read(ids, ['name', 'priority', 'planned_hours'])).toEqual(snapshot);
  });

  it('names the item whose new values clash with a stored record\'s unique key, or with another item\'s', async () => {
    const [a, b, c] = await t.run(async () => (await ProjectTag.create_many([{ name: 'BU t1' }, { name: 'BU t2' }, { name: 'BU t3' }])).map((r) => r.id));
    const stored = await t.api('PUT', '/api/bulk-update/ProjectTag', [{ id: a, name: 'BU t1 bis' }, { id: b, color: 3 }, { id: c, name: 'red' }]);
    expectItemError(stored, 2, /'name' must be unique/);
    const inside = await t.api('PUT', '/api/bulk-update/ProjectTag', [{ id: a, name: 'BU same' }, { id: b, name: 'BU same' }]);
    expectItemError(inside, 1, /item 0 has the same value/);
    const names = await t.run(async () => (await ProjectTag.query({ id__in: [a, b, c] }).order_by('id ASC').read(['name'])).map((r) => r.name));
    expect(names).toEqual(['BU t1', 'BU t2', 'BU t3']);
  });

  it('an id that does not exist is a 404 for the whole call, nothing written', async () => {
    const res = await t.api('PUT', '/api/bulk-update/ProjectTask', [{ id: ids[0], name: 'BU never' }, { id: 99999999, name: 'x' }]);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().detail).toMatch(/99999999 does not exist/);
    expect(await count("Q(name='BU never')")).toBe(0);
  });

  it('refuses a malformed {selection, vals} body', async () => {
    const bodies = [
      { vals: { name: 'x' } },
      { selection: { ids: [ids[0]] } },
      { selection: {}, vals: { name: 'x' } },
      { selection: { ids: [ids[0]], filter_str: '' }, vals: { name: 'x' } },
      { selection: { ids: [ids[0]] }, vals: { name: 'x' }, extra: 1 },
      'x',
    ];
    for (const body of bodies) expect((await t.api('PUT', '/api/bulk-update/ProjectTask', body)).statusCode).toBe(400);
  });
});

describe('bulk-delete', () => {
  async function tasks(prefix: string, n: number): Promise<number[]> {
    const res = await t.api('POST', '/api/bulk-create/ProjectTask', Array.from({ length: n }, (_, i) => ({ name: `${prefix} ${i}` })));
    expect(res.statusCode, res.body).toBe(200);
    return res.json().map((r: any) => r.id);
  }

  it('deletes a bare array of ids (duplicates collapsed) and answers {deleted, ids}', async () => {
    const ids = await tasks('BD ids', 3);
    const res = await t.api('DELETE', '/api/bulk-delete/ProjectTask', [ids[2], ids[0], ids[2]]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ deleted: 2, ids: [ids[2], ids[0]] });
    expect(await t.run(() => ProjectTask.query("Q(name__startswith='BD ids')").ids())).toEqual([ids[1]]);
  });

  it('deletes what a selection matches', async () => {
    const ids = await tasks('BD sel', 4);
    const res = await t.api('DELETE', '/api/bulk-delete/ProjectTask', { filter_str: "Q(name__startswith='BD sel')", exclude_ids: [ids[1]] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().deleted).toBe(3);
    expect(res.json().ids.sort()).toEqual([ids[0], ids[2], ids[3]].sort());
    expect(await t.run(() => ProjectTask.query("Q(name__startswith='BD sel')").ids())).toEqual([ids[1]]);
  });

  it('an unknown id is a 404 and nothing is deleted; a non-id item is `item <index>: …`; {} is a 400', async () => {
    const ids = await tasks('BD keep', 2);
    const missing = await t.api('DELETE', '/api/bulk-delete/ProjectTask', [ids[0], 99999999]);
    expect(missing.statusCode, missing.body).toBe(404);
    expectItemError(await t.api('DELETE', '/api/bulk-delete/ProjectTask', [ids[0], 'x']), 1, /record id/);
    const empty = await t.api('DELETE', '/api/bulk-delete/ProjectTask', {});
    expect(empty.statusCode).toBe(400);
    expect(empty.json().detail).toMatch(/names no records/);
    expect(await count("Q(name__startswith='BD keep')")).toBe(2);
  });
});

describe('FF_BULK_MAX', () => {
  it('a body or a selection over the maximum is a 400 naming it, and nothing is written', async () => {
    const app = await buildApp(t.platform, { bulkMax: 3 });
    try {
      const ask = (method: 'POST' | 'PUT' | 'DELETE', url: string, body: unknown) => app.inject({
        method, url, payload: JSON.stringify(body),
        headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
      });
      const four = Array.from({ length: 4 }, (_, i) => ({ name: `MAX ${i}` }));
      const created = await ask('POST', '/api/bulk-create/ProjectTask', four);
      expect(created.statusCode, created.body).toBe(400);
      expect(created.json().detail).toMatch(/at most 3 items \(FF_BULK_MAX\)/);
      expect(await count("Q(name__startswith='MAX ')")).toBe(0);
      const three = await ask('POST', '/api/bulk-create/ProjectTask', four.slice(0, 3));
      expect(three.statusCode, three.body).toBe(200);
      await t.run(() => ProjectTask.create({ name: 'MAX 3' }));
      for (const [method, url, body] of [
        ['PUT', '/api/bulk-update/ProjectTask', { selection: { filter_str: "Q(name__startswith='MAX ')" }, vals: { priority: '1' } }],
        ['DELETE', '/api/bulk-delete/ProjectTask', { filter_str: "Q(name__startswith='MAX ')" }],
        ['POST', '/api/clone/ProjectTask', { filter_str: "Q(name__startswith='MAX ')" }],
      ] as const) {
        const res = await ask(method, url, body);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().detail).toMatch(/at most 3 records \(FF_BULK_MAX\)/);
      }
      expect(await count("Q(name__startswith='MAX ') & Q(priority='1')")).toBe(0);
      expect(await count("Q(name__startswith='MAX ')")).toBe(4);
    } finally {
      await app.close();
    }
  });
});
