/**
 * A query's page compiles its statement once per shape (`orm/read/compiled-tree-read.ts`): the
 * filter's comparable literals are slots (`orm/query/literal-slots.ts`), so `Q(name='a')` and
 * `Q(name='b')` share one statement. These tests check that what is reused is exactly what the
 * uncompiled read builds (same text, same values, same records), that a literal equal to a
 * rule's value never moves the rule's, that a bad literal is refused as a fresh compile refuses
 * it, that counted pages count with the new literal, and that a filter on the clock is never
 * reused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAccessPolicy } from '../../src/access/access-policy.js';
import type { AccessProfile } from '../../src/access/access-profile.js';
import { currentEnv } from '../../src/orm/env.js';
import { reusableTreeReads } from '../../src/orm/read/compiled-tree-read.js';
import { buildFieldTree } from '../../src/orm/read/field-tree.js';
import { readTree, readTreeCounted } from '../../src/orm/read/read-records.js';
import { QuerySet } from '../../src/orm/queryset.js';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { principal, runAs, type Principal } from '../support/acting-principal.js';

let t: TestDatabase;
/** A project user whose rule shows only the tasks it created and shared ones. */
let clerk: Principal;
const ids: Record<string, number> = {};
const FIELDS = ['name', 'priority', 'stage.name', 'tags.name', 'created_by'];

beforeAll(async () => {
  t = await testDatabase('full');
  clerk = await principal(t, 'Clerk', ['core.group_user', 'project.group_project_user']);
  await t.run(async () => {
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await RecordRule.create({
      name: 'Own or shared tasks (compiled pages)', model: 'ProjectTask', filter: "Q(created_by=user_id) | Q(name__startswith='Shared')", groups: [projectUser!],
      perm_write: false, perm_create: false, perm_delete: false,
    });
    ids.project = (await ProjectProject.create({ name: 'Compiled pages' })).id;
    ids.shared = (await ProjectTask.create({ name: 'Shared page task', project: ids.project, priority: '1' })).id;
    ids.other = (await ProjectTask.create({ name: 'Hidden page task', project: ids.project, priority: '1' })).id;
  });
  ids.own = await t.run(async () => (await ProjectTask.create({ name: 'Own page task', project: ids.project, priority: '2' })).id, { uid: clerk.uid });
  ids.own2 = await t.run(async () => (await ProjectTask.create({ name: 'Own page task two', project: ids.project, priority: '1' })).id, { uid: clerk.uid });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const tasks = () => new QuerySet(currentEnv().registry.meta('ProjectTask')).public_only().filter({ project: ids.project! });
const page = (filter: string) => tasks().filter(filter).order_by('name ASC').limit(10);
/** The same read, uncompiled: what the queryset built before statements were compiled per shape. */
const uncompiled = (qs: QuerySet, counted = false) => {
  const tree = buildFieldTree(qs.meta, FIELDS, true);
  return counted ? readTreeCounted(tree, qs.state) : readTree(tree, qs.state);
};
const reusable = (access: AccessProfile) => reusableTreeReads(compileAccessPolicy(access), currentEnv().registry.meta('ProjectTask'));

describe('a page compiled once per shape', () => {
  it('sends the very statement the uncompiled read builds, with each literal in its place, and answers the same records', async () => {
    await runAs(t, clerk, async (access) => {
      const names = (rows: unknown[]) => rows.map((r) => (r as { name: string }).name);
      const seen: string[][] = [];
      for (const priority of ['2', '1', '0', '1']) {
        const qs = page(`Q(priority='${priority}')`);
        const counted = await t.countStatements(async () => {
          const compiled = await qs.read(FIELDS);
          expect(compiled).toEqual(await uncompiled(qs));
          seen.push(names(compiled));
        });
        const [fromCompiled, fromUncompiled] = counted.statements;
        expect(fromCompiled).toBe(fromUncompiled);
      }
      // Each literal selected its own rows (the rule still hides the colleague's task).
      expect(seen).toEqual([['Own page task'], ['Own page task two', 'Shared page task'], [], ['Own page task two', 'Shared page task']]);
      expect(reusable(access)).toBe(1); // one shape, four literals
    });
  });

  it("a literal equal to the rule's user never moves the rule: the next literal filters, the rule stays the clerk's", async () => {
    const clerkUid = clerk.uid;
    // Who created the shared and hidden tasks (they were created as the platform's default user).
    const creator = { id: await t.run(async () => currentEnv().uid) };
    expect(creator.id).not.toBe(clerkUid);
    await runAs(t, clerk, async () => {
      // Compiled with the clerk's own id, the value the rule's `user_id` is bound to as well.
      expect((await page(`Q(created_by=${clerkUid})`).read(['name'])).map((r) => r.name)).toEqual(['Own page task', 'Own page task two']);
      // Another creator's tasks: the rule (own or shared) still hides the hidden one.
      const others = await page(`Q(created_by=${creator.id})`).read(['name']);
      expect(others.map((r) => r.name)).toEqual(['Shared page task']);
      const fresh = await uncompiled(page(`Q(created_by=${creator.id})`));
      expect(others.map((r) => r.id)).toEqual((fresh as { id: number }[]).map((r) => r.id));
    });
  });

  it('a bad literal on a compiled shape is refused as a fresh compile refuses it', async () => {
    await runAs(t, clerk, async () => {
      await page("Q(deadline__gte='2026-01-01')").read(['name']);
      const refusal = (run: () => Promise<unknown>) => run().then(() => null, (err: Error) => ({ name: err.name, message: err.message }));
      const viaCompiled = await refusal(() => page("Q(deadline__gte='not a date')").read(['name']));
      const fresh = await refusal(() => uncompiled(page("Q(deadline__gte='not a date')")));
      expect(viaCompiled).not.toBeNull();
      expect(viaCompiled).toEqual(fresh);
    });
  });

  it('a counted page counts with the new literal (its count sub-select holds the literal too)', async () => {
    await runAs(t, clerk, async (access) => {
      const before = reusable(access);
      for (const [priority, count] of [['1', 2], ['2', 1], ['0', 0]] as const) {
        const qs = page(`Q(priority='${priority}')`);
        const compiled = await qs.read_counted(FIELDS);
        expect(compiled.count).toBe(count);
        expect(compiled).toEqual(await uncompiled(qs, true));
      }
      expect(reusable(access)).toBe(before + 1);
    });
  });

  it('a filter on the clock is compiled for every read, never reused', async () => {
    await runAs(t, clerk, async (access) => {
      const before = reusable(access);
      for (let i = 0; i < 2; i++) await page('Q(deadline__gte=today) | Q(deadline=None)').read(['name']);
      expect(reusable(access)).toBe(before);
    });
  });

  it('over HTTP, two states of one shape: the second is one statement and answers its own records', async () => {
    const query = (priority: string) => t.api('POST', '/api/query/ProjectTask', {
      filter_str: `Q(project=${ids.project}) & Q(priority='${priority}')`, fields: ['name'], order_by: ['name ASC'], counter: true,
    }, { authorization: `Bearer ${clerk.key}` });
    expect((await query('2')).json()).toMatchObject({ count: 1, data: [{ name: 'Own page task' }] });
    const counted = await t.countStatements(async () => {
      const res = await query('1');
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ count: 2, data: [{ name: 'Own page task two' }, { name: 'Shared page task' }] });
    });
    expect(counted.count, counted.statements.join('\n')).toBe(1);
  });
});
