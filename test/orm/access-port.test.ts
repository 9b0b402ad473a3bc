/**
 * The ORM's access port (`orm/access-policy.ts`): the read and write paths ask whatever policy the
 * unit of work carries — here one written by the test, not compiled by `access/` — at their one
 * point each, and put its answers into their own statements: the read predicate into the query's
 * WHERE (and into the traversal of a relation), the records' authorisation before the UPDATE, the
 * statement checks into the INSERT's RETURNING. Elevated code asks nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../src/db/sql-fragment.js';
import { AccessError } from '../../src/errors.js';
import type { AccessPolicy, Permission, StatementChecks } from '../../src/orm/access-policy.js';
import { currentEnv, withEnv } from '../../src/orm/env.js';
import type { Field } from '../../src/orm/fields/field.js';
import type { ModelMeta } from '../../src/orm/model-meta.js';
import { inCondition } from '../../src/orm/query/filter-ast.js';
import type { QueryScope } from '../../src/orm/query/query-scope.js';
import { QuerySet } from '../../src/orm/queryset.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

/** Hides tasks named `Hidden…`, refuses creating tasks named `Forbidden…` in the INSERT, and (when told) every write; notes each question. */
class RecordingPolicy implements AccessPolicy {
  readonly calls: string[] = [];
  refuseWrites = false;

  hasRight(): boolean {
    return true;
  }

  assertRight(meta: ModelMeta, perm: Permission): void {
    this.calls.push(`right ${meta.name} ${perm}`);
  }

  readCondition(meta: ModelMeta, scope: QueryScope, joinedAt?: string) {
    this.calls.push(`read ${meta.name}${joinedAt === undefined ? '' : ' joined'}`);
    if (meta.name !== 'ProjectTask') return null;
    return sql`${sql.id(joinedAt ?? scope.alias, 'name')} NOT LIKE ${'Hidden%'}`;
  }

  assertCompanyValues(meta: ModelMeta): void {
    this.calls.push(`values ${meta.name}`);
  }

  async assertRecordsAllowed(meta: ModelMeta, perm: Permission, ids: readonly number[]): Promise<void> {
    this.calls.push(`records ${meta.name} ${perm} ${ids.length}`);
    if (this.refuseWrites) throw new AccessError('Refused by the test policy');
  }

  statementChecks(meta: ModelMeta, op: 'create' | 'write', _written: readonly ReadonlyMap<Field, unknown>[]): StatementChecks | null {
    this.calls.push(`statement ${meta.name} ${op}`);
    if (op !== 'create' || meta.name !== 'ProjectTask') return null;
    const condition = sql`(${sql.id(meta.table, 'name')} NOT LIKE ${'Forbidden%'})`;
    return {
      links: null,
      rules: {
        returning: sql`, ${condition} AS ${sql.id('__test_allowed')}`,
        condition,
        verify(rows) {
          for (const row of rows) {
            const allowed = row.__test_allowed === true;
            delete row.__test_allowed;
            if (!allowed) throw new AccessError('Creating this task is forbidden by the test policy');
          }
        },
      },
      rulesAfter: false,
    };
  }

  /** The questions about `model`, in order. */
  about(model: string): string[] {
    return this.calls.filter((c) => c.split(' ')[1] === model);
  }
}

let t: TestDatabase;
const ids: Record<string, number> = {};
const task = () => currentEnv().registry.meta('ProjectTask');
const project = () => currentEnv().registry.meta('ProjectProject');
const create = (meta: ModelMeta, vals: Record<string, unknown>) => meta.cls.create(vals);

/** Model code under `policy`, one unit of work. */
function runUnder<T>(policy: AccessPolicy, fn: () => Promise<T>): Promise<T> {
  return t.run(fn, { uid: ids.admin!, su: false, access: policy });
}

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    [ids.admin] = await new QuerySet(currentEnv().registry.meta('User')).order_by('id ASC').limit(1).ids();
    ids.project = (await create(project(), { name: 'Port project' })).id;
    ids.hiddenProject = (await create(project(), { name: 'Port project with a hidden task' })).id;
    ids.visible = (await create(task(), { name: 'Visible task', project: ids.project })).id;
    ids.hidden = (await create(task(), { name: 'Hidden task', project: ids.hiddenProject })).id;
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('the read predicate', () => {
  it("is asked once for a query's rows and goes into its one statement", async () => {
    const policy = new RecordingPolicy();
    const { names, statements } = await runUnder(policy, async () => {
      let names: unknown[] = [];
      const { statements } = await t.countStatements(async () => {
        names = (await new QuerySet(task()).filter(inCondition(['id'], [ids.visible!, ids.hidden!])).order_by('id ASC').read(['name'])).map((r) => r.name);
      });
      return { names, statements };
    });
    expect(names).toEqual(['Visible task']);
    expect(policy.about('ProjectTask')).toEqual(['read ProjectTask']);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain('NOT LIKE');
  });

  it('restricts the records a relation reaches, once per traversal: a hidden task behaves as absent', async () => {
    const policy = new RecordingPolicy();
    const found = await runUnder(policy, () => new QuerySet(project())
      .filter(inCondition(['id'], [ids.project!, ids.hiddenProject!])).filter("Q(tasks__name__startswith='Hidden') | Q(tasks__name__startswith='Visible')")
      .order_by('id ASC').ids());
    expect(found).toEqual([ids.project]);
    expect(policy.about('ProjectTask')).toEqual(['read ProjectTask joined', 'read ProjectTask joined']);
  });

  it('is not asked by elevated code', async () => {
    const policy = new RecordingPolicy();
    const found = await runUnder(policy, () => withEnv({ su: true }, () => new QuerySet(task()).filter(inCondition(['id'], [ids.visible!, ids.hidden!])).ids()));
    expect(found).toHaveLength(2);
    expect(policy.calls).toEqual([]);
  });
});

describe('the write authorisation', () => {
  it('an update asks for its values, then its records, then its statement, once each', async () => {
    const policy = new RecordingPolicy();
    await runUnder(policy, () => new QuerySet(task()).filter({ id: ids.visible! }).update({ priority: '1' }));
    expect(policy.about('ProjectTask')).toEqual(['read ProjectTask', 'values ProjectTask', 'records ProjectTask write 1', 'statement ProjectTask write']);
  });

  it('an update the policy refuses writes nothing', async () => {
    const policy = new RecordingPolicy();
    policy.refuseWrites = true;
    const refused = await runUnder(policy, () => new QuerySet(task()).filter({ id: ids.visible! }).update({ name: 'Renamed task' })).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AccessError);
    const [row] = await t.run(() => new QuerySet(task()).filter({ id: ids.visible! }).read(['name']));
    expect(row!.name).toBe('Visible task');
  });

  it("a create's checks ride in its INSERT: refused there, nothing is kept", async () => {
    const policy = new RecordingPolicy();
    const created = await runUnder(policy, async () => (await create(task(), { name: 'Allowed task', project: ids.project })).id);
    expect(created).toBeGreaterThan(0);
    expect(policy.about('ProjectTask')).toEqual(['right ProjectTask create', 'values ProjectTask', 'statement ProjectTask create']);

    const refused = await runUnder(new RecordingPolicy(), () => create(task(), { name: 'Forbidden task', project: ids.project })).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(AccessError);
    expect((refused as Error).message).toBe('Creating this task is forbidden by the test policy');
    expect(await t.run(() => new QuerySet(task()).filter({ name: 'Forbidden task' }).count())).toBe(0);
  });

  it('a delete asks for its records once', async () => {
    const policy = new RecordingPolicy();
    const doomed = await t.run(async () => (await create(task(), { name: 'Doomed task', project: ids.project })).id);
    await runUnder(policy, () => new QuerySet(task()).filter({ id: doomed }).delete());
    expect(policy.about('ProjectTask')).toEqual(['read ProjectTask', 'records ProjectTask delete 1']);
  });
});
