/**
 * QuerySets over the project module's models: filtering (string, object, AST), ordering (default,
 * through relations, by a ManyToOne), paging, count/exists/first/ids, aggregates, groups,
 * updates and deletes of a whole queryset, and the archivable default.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequest, QuerySyntaxError } from '../../src/errors.js';
import type { Model } from '../../src/orm/model.js';
import type { FilterNode } from '../../src/orm/query/filter-ast.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { type Rec, model } from '../support/orm.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await testDatabase('full');
});
afterAll(async () => {
  await t?.close();
});

const Task = () => model('ProjectTask');
const names = (recs: readonly Model[]) => recs.map((r) => (r as Rec).name as string);

let seq = 0;
/**
 * A project with its own stages (their sequence order is the reverse of their name order) and
 * tasks: `alpha` (stage Zulu, seq 1), `bravo` (stage Alpha, seq 2), `charlie` (stage Zulu, seq 3),
 * `delta` (no stage, seq 4).
 */
async function seed() {
  seq += 1;
  const project = (await model('ProjectProject').create({ name: `QS project ${seq}` })) as Rec;
  const [zulu, alpha] = (await model('ProjectStage').create_many([
    { name: `Zulu ${seq}`, sequence: 1 }, { name: `Alpha ${seq}`, sequence: 2 },
  ])) as Rec[];
  const tasks = (await Task().create_many([
    { name: 'alpha', project: project.id, stage: zulu!.id, sequence: 1, planned_hours: 10, effective_hours: 4, priority: '0' },
    { name: 'bravo', project: project.id, stage: alpha!.id, sequence: 2, planned_hours: 5, effective_hours: 5, priority: '2' },
    { name: 'charlie', project: project.id, stage: zulu!.id, sequence: 3, planned_hours: 2.5, effective_hours: 0, priority: '0' },
    { name: 'delta', project: project.id, stage: null, sequence: 4, planned_hours: 0, effective_hours: 1, priority: '1' },
  ])) as Rec[];
  return { project, zulu: zulu!, alpha: alpha!, tasks, qs: Task().query({ project: project.id }) };
}

describe('filter', () => {
  it('takes a Q-expression string, an object of equalities or a parsed AST, with the same result', async () => {
    await t.run(async () => {
      const { project, tasks } = await seed();
      const ast: FilterNode = {
        kind: 'and',
        children: [
          { kind: 'condition', segments: ['project'], value: project.id, position: 0 },
          { kind: 'condition', segments: ['priority'], value: '0', position: 0 },
        ],
      };
      const expected = [tasks[0]!.id, tasks[2]!.id];
      expect(await Task().query(`Q(project=${project.id}) & Q(priority='0')`).ids()).toEqual(expected);
      expect(await Task().query({ project: project.id, priority: '0' }).ids()).toEqual(expected);
      expect(await Task().query(ast).ids()).toEqual(expected);
      // Successive filters are ANDed; a queryset is immutable.
      const base = Task().query({ project: project.id });
      const narrowed = base.filter("Q(name__in=['alpha', 'bravo'])").filter({ priority: '2' });
      expect(await narrowed.ids()).toEqual([tasks[1]!.id]);
      expect(await base.count()).toBe(4);
    });
  });

  it('rejects something that is not a filter', async () => {
    await expect(t.run(async () => Task().query(42 as never))).rejects.toThrow(QuerySyntaxError);
  });
});

describe('order_by', () => {
  it('applies the model’s _order_by when none is given', async () => {
    await t.run(async () => {
      // ProjectStage._order_by = ['sequence ASC', 'id ASC']: neither id nor name order.
      const [m, n] = await model('ProjectStage').create_many([{ name: 'M order', sequence: 9 }, { name: 'N order', sequence: 8 }]);
      expect(await model('ProjectStage').query(`Q(id__in=[${m!.id}, ${n!.id}])`).ids()).toEqual([n!.id, m!.id]);
      // ProjectTask._order_by starts with sequence ASC.
      const { qs } = await seed();
      expect(names(await qs.all())).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
    });
  });

  it('orders by fields, with directions and several entries', async () => {
    await t.run(async () => {
      const { qs } = await seed();
      expect(names(await qs.order_by('name DESC').all())).toEqual(['delta', 'charlie', 'bravo', 'alpha']);
      expect(names(await qs.order_by('priority DESC', 'name ASC').all())).toEqual(['bravo', 'delta', 'alpha', 'charlie']);
      expect(names(await qs.order_by('planned_hours ASC').all())).toEqual(['delta', 'charlie', 'bravo', 'alpha']);
    });
  });

  it('orders through a relation: stage__sequence DESC, stage.name ASC, with NULLS placement', async () => {
    await t.run(async () => {
      const { qs } = await seed();
      // Stage sequences: alpha/charlie in Zulu (1), bravo in Alpha (2), delta none (NULL: last in ASC, first in DESC).
      expect(names(await qs.order_by('stage__sequence DESC', 'name ASC').all())).toEqual(['delta', 'bravo', 'alpha', 'charlie']);
      expect(names(await qs.order_by('stage__sequence DESC NULLS LAST', 'name ASC').all())).toEqual(['bravo', 'alpha', 'charlie', 'delta']);
      expect(names(await qs.order_by('stage.name ASC', 'name DESC').all())).toEqual(['bravo', 'charlie', 'alpha', 'delta']);
    });
  });

  it('ordering by a ManyToOne orders by the target’s default order, not by its id or name', async () => {
    await t.run(async () => {
      // Zulu was created first (lower id) but has the lower sequence as well; make a stage whose
      // id and name order both disagree with its sequence.
      const { qs, project } = await seed();
      const first = (await model('ProjectStage').create({ name: 'AAA first by name', sequence: 100 })) as Rec;
      await Task().create({ name: 'echo', project: project.id, stage: first.id, sequence: 0 });
      expect(names(await qs.order_by('stage ASC', 'name ASC').all())).toEqual(['alpha', 'charlie', 'bravo', 'echo', 'delta']);
      expect(names(await qs.order_by('stage DESC', 'name ASC').all())).toEqual(['delta', 'echo', 'bravo', 'alpha', 'charlie']);
    });
  });

  it('ordering by `<many2one>__id` orders by the foreign key itself, without a join', async () => {
    const { zulu, alpha, project } = await t.run(() => seed());
    expect(zulu.id).toBeLessThan(alpha.id as number);
    const { statements } = await t.countStatements(() => t.run(async () => {
      // The key: bravo (Alpha, the higher id) first, then Zulu's two by name; delta's NULL first in DESC.
      expect(names(await Task().query({ project: project.id }).order_by('stage__id DESC', 'name ASC').all()))
        .toEqual(['delta', 'bravo', 'alpha', 'charlie']);
      expect(names(await Task().query({ project: project.id }).order_by('stage.id ASC NULLS FIRST', 'name DESC').all()))
        .toEqual(['delta', 'charlie', 'alpha', 'bravo']);
    }));
    const selects = statements.filter((s) => /ORDER BY/i.test(s));
    expect(selects).toHaveLength(2);
    for (const s of selects) {
      expect(s).not.toMatch(/JOIN "project_stage"/i);
      expect(s).toMatch(/ORDER BY "t\d+"\."stage_id" (DESC|ASC NULLS FIRST)/);
    }
  });

  it('an unknown field or a malformed entry is a QuerySyntaxError naming it', async () => {
    await expect(t.run(() => Task().query().order_by('nope ASC').all())).rejects.toThrow(/nope/);
    await expect(t.run(() => Task().query().order_by('nope ASC').all())).rejects.toBeInstanceOf(QuerySyntaxError);
    await expect(t.run(() => Task().query().order_by('name; DROP TABLE x').all())).rejects.toBeInstanceOf(QuerySyntaxError);
    await expect(t.run(() => Task().query().order_by('name__sequence ASC').all())).rejects.toBeInstanceOf(QuerySyntaxError);
  });
});

describe('paging and terminal methods', () => {
  it('limit and offset page through the ordered records; count ignores them', async () => {
    await t.run(async () => {
      const { qs } = await seed();
      const ordered = qs.order_by('name ASC');
      expect(names(await ordered.limit(2).all())).toEqual(['alpha', 'bravo']);
      expect(names(await ordered.limit(2).offset(2).all())).toEqual(['charlie', 'delta']);
      expect(names(await ordered.offset(3).all())).toEqual(['delta']);
      expect(await ordered.limit(2).offset(1).count()).toBe(4);
      expect(await ordered.limit(1).limit(null).count()).toBe(4);
      expect(names(await ordered.limit(1).limit(null).all())).toHaveLength(4);
    });
  });

  it('exists, first and ids', async () => {
    await t.run(async () => {
      const { qs, tasks } = await seed();
      expect(await qs.exists()).toBe(true);
      expect(await qs.filter({ name: 'nobody' }).exists()).toBe(false);
      expect(((await qs.order_by('name DESC').first()) as Rec).name).toBe('delta');
      expect(await qs.filter({ name: 'nobody' }).first()).toBeNull();
      expect(await qs.ids()).toEqual(tasks.map((x) => x.id));
      expect(await qs.order_by('name DESC').limit(2).ids()).toEqual([tasks[3]!.id, tasks[2]!.id]);
    });
  });

  it('read returns serialized records along field paths', async () => {
    await t.run(async () => {
      const { qs, zulu, project } = await seed();
      const [first] = await qs.limit(1).read(['name', 'stage.name', 'project.name', 'tags']);
      expect(first).toEqual({
        id: expect.any(Number), display_name: 'alpha', name: 'alpha',
        stage: { id: zulu.id, display_name: zulu.name, name: zulu.name },
        project: { id: project.id, display_name: project.name, name: project.name },
        tags: [],
      });
    });
  });
});

describe('aggregate', () => {
  it('computes sum, avg, min, max and count over all matching records (ignoring the page)', async () => {
    await t.run(async () => {
      const { qs } = await seed();
      expect(await qs.limit(1).aggregate({ planned_hours: 'sum' })).toEqual({ planned_hours: 17.5 });
      expect(await qs.aggregate({ effective_hours: 'avg' })).toEqual({ effective_hours: 2.5 });
      expect(await qs.aggregate({ planned_hours: 'min', effective_hours: 'max', sequence: 'count' })).toEqual({
        planned_hours: 0, effective_hours: 5, sequence: 4,
      });
      expect(await qs.filter({ priority: '0' }).aggregate({ planned_hours: 'max' })).toEqual({ planned_hours: 10 });
    });
  });

  it('gives null for sums over no records and 0 for counts', async () => {
    await t.run(async () => {
      const { qs } = await seed();
      expect(await qs.filter({ name: 'nobody' }).aggregate({ planned_hours: 'sum', sequence: 'count' })).toEqual({ planned_hours: null, sequence: 0 });
    });
  });

  it('refuses non-numeric fields, unknown fields and unknown functions', async () => {
    await expect(t.run(() => Task().query().aggregate({ name: 'sum' }))).rejects.toBeInstanceOf(BadRequest);
    await expect(t.run(() => Task().query().aggregate({ nope: 'sum' }))).rejects.toThrow(/nope/);
    await expect(t.run(() => Task().query().aggregate({ sequence: 'median' as never }))).rejects.toBeInstanceOf(BadRequest);
  });
});

describe('group', () => {
  it('groups by a ManyToOne with {id, display_name} keys, counts and aggregates, empty group last', async () => {
    await t.run(async () => {
      const { qs, zulu, alpha } = await seed();
      const groups = await qs.group(['stage'], { planned_hours: 'sum' });
      const expected = [
        { stage: { id: zulu.id, display_name: zulu.name }, count: 2, aggregates: { planned_hours: 12.5 } },
        { stage: { id: alpha.id, display_name: alpha.name }, count: 1, aggregates: { planned_hours: 5 } },
        { stage: null, count: 1, aggregates: { planned_hours: 0 } },
      ];
      // Groups are ordered by the key column.
      expect(groups).toEqual(zulu.id < alpha.id ? expected : [expected[1], expected[0], expected[2]]);
    });
  });

  it('groups by scalar fields and by several fields', async () => {
    await t.run(async () => {
      const { qs, zulu } = await seed();
      expect(await qs.group(['priority'])).toEqual([
        { priority: '0', count: 2, aggregates: {} },
        { priority: '1', count: 1, aggregates: {} },
        { priority: '2', count: 1, aggregates: {} },
      ]);
      const both = await qs.filter({ stage: zulu.id }).group(['stage', 'priority'], { sequence: 'max' });
      expect(both).toEqual([{ stage: { id: zulu.id, display_name: zulu.name }, priority: '0', count: 2, aggregates: { sequence: 3 } }]);
    });
  });

  it('refuses to group by nothing or by a non-stored field', async () => {
    await expect(t.run(() => Task().query().group([]))).rejects.toBeInstanceOf(BadRequest);
    await expect(t.run(() => Task().query().group(['tags']))).rejects.toBeInstanceOf(BadRequest);
  });
});

describe('update and delete of a whole queryset', () => {
  it('update writes every matching record, returns the count and recomputes stored fields', async () => {
    await t.run(async () => {
      const { qs, tasks } = await seed();
      expect(await qs.filter({ priority: '0' }).update({ planned_hours: 20 })).toBe(2);
      const [a, , c] = (await Task().browse(tasks.map((x) => x.id))) as Rec[];
      expect([a!.planned_hours, a!.remaining_hours]).toEqual([20, 16]);
      expect([c!.planned_hours, c!.remaining_hours]).toEqual([20, 20]);
      expect(await qs.filter({ name: 'nobody' }).update({ planned_hours: 1 })).toBe(0);
    });
  });

  it('update of a whole page only touches the page', async () => {
    await t.run(async () => {
      const { qs } = await seed();
      expect(await qs.order_by('name ASC').limit(2).update({ description: 'first two' })).toBe(2);
      expect(await qs.filter({ description: 'first two' }).ids()).toHaveLength(2);
    });
  });

  it('delete removes every matching record, returns the count and recomputes dependents', async () => {
    await t.run(async () => {
      const { qs, project } = await seed();
      expect(await ((await model('ProjectProject').get(project.id)) as Rec).task_count).toBe(4);
      expect(await qs.filter({ priority: '0' }).delete()).toBe(2);
      expect(names(await qs.all())).toEqual(['bravo', 'delta']);
      expect(await ((await model('ProjectProject').get(project.id)) as Rec).task_count).toBe(2);
      expect(await qs.filter({ name: 'nobody' }).delete()).toBe(0);
    });
  });
});

describe('batch loading', () => {
  let projectId = 0;
  beforeAll(async () => {
    projectId = await t.run(async () => {
      const project = await model('ProjectProject').create({ name: 'Batch project' });
      const stages = await model('ProjectStage').create_many([{ name: 'Batch 1' }, { name: 'Batch 2' }]);
      const tags = await model('ProjectTag').create_many([{ name: 'batch-a' }, { name: 'batch-b' }]);
      await Task().create_many(Array.from({ length: 20 }, (_, i) => ({
        name: `batch ${i}`, project: project.id, stage: stages[i % 2]!.id, tags: [tags[i % 2]!.id, tags[(i + 1) % 2]!.id].slice(0, 1 + (i % 2)),
      })));
      return project.id;
    });
  });

  async function statements(limit: number, fn: (recs: Rec[]) => Promise<unknown>): Promise<number> {
    const { count } = await t.countStatements(() => t.run(async () => {
      const recs = (await Task().query({ project: projectId }).limit(limit).all()) as Rec[];
      expect(recs).toHaveLength(limit);
      await fn(recs);
    }));
    return count;
  }

  it('awaiting a relational field on many records loads it once for the whole batch', async () => {
    const walk = async (recs: Rec[]) => {
      for (const rec of recs) {
        expect(((await rec.stage) as Rec).name).toMatch(/^Batch/);
        expect(((await rec.tags) as Rec[]).length).toBeGreaterThan(0);
        expect(((await rec.project) as Rec).id).toBe(projectId);
      }
    };
    expect(await statements(20, walk)).toBe(await statements(2, walk));
  });

  it('reading along relation paths costs the same statements for 2 records or 20', async () => {
    const read = async (n: number) => (await t.countStatements(() => t.run(async () => {
      const out = await Task().query({ project: projectId }).limit(n).read(['name', 'stage.name', 'tags.name', 'project.name', 'project.manager']);
      expect(out).toHaveLength(n);
    }))).count;
    expect(await read(20)).toBe(await read(2));
  });
});

describe('archivable models', () => {
  it('list only active records unless the filter names active', async () => {
    await t.run(async () => {
      const { qs, tasks, project } = await seed();
      await tasks[0]!.write({ active: false });
      expect(names(await qs.all())).toEqual(['bravo', 'charlie', 'delta']);
      expect(await qs.count()).toBe(3);
      expect(await qs.aggregate({ planned_hours: 'sum' })).toEqual({ planned_hours: 7.5 });
      expect(names(await qs.filter('Q(active__in=[True, False])').all())).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
      expect(names(await qs.filter('Q(active=False)').all())).toEqual(['alpha']);
      expect(names(await qs.filter('~Q(active=True)').all())).toEqual(['alpha']);
      expect(names(await qs.with_archived().all())).toEqual(['alpha', 'bravo', 'charlie', 'delta']);
      // Loading by id includes archived records.
      expect(await Task().browse([tasks[0]!.id])).toHaveLength(1);
      // The project's stored task count depends on tasks.active.
      expect(await ((await model('ProjectProject').get(project.id)) as Rec).task_count).toBe(3);
    });
  });

  it('to-many reads show only the active lines', async () => {
    await t.run(async () => {
      const { tasks, project } = await seed();
      await tasks[1]!.write({ active: false });
      expect(names(await ((await model('ProjectProject').get(project.id)) as Rec).tasks)).toEqual(['alpha', 'charlie', 'delta']);
    });
  });
});

describe('search', () => {
  it('matches terms against the name-search fields, ANDing several terms', async () => {
    await t.run(async () => {
      const Contact = model('Contact');
      await Contact.create_many([
        { name: 'Search Jane', email: 'jane@example.org' }, { name: 'Search John', email: 'john@corp.test' },
      ]);
      expect(names(await Contact.query().search(['search']).all())).toEqual(['Search Jane', 'Search John']);
      expect(names(await Contact.query().search(['search', 'corp.test']).all())).toEqual(['Search John']);
    });
  });
});
