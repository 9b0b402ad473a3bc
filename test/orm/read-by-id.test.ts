/**
 * A fetch by id compiles its statement once per principal, model and field list
 * (`orm/read/read-by-id.ts`). These tests check that what is reused is exactly what a queryset
 * would build (same text, same record), that one principal's statement never answers for another,
 * that a new access profile, a rule on the clock or a flood of field lists get what they must, and
 * that a remembered key's compiled fetch still carries the request guard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAccessPolicy } from '../../src/access/access-policy.js';
import { currentEnv } from '../../src/orm/env.js';
import { MAX_COMPILED_READS, readById, reusableReads } from '../../src/orm/read/read-by-id.js';
import { QuerySet } from '../../src/orm/queryset.js';
import { ApiKey } from '../../modules/core/models/api_key.js';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { principal, runAs, type Principal } from '../support/acting-principal.js';
import { READ_GUARD } from '../support/guard-text.js';

let t: TestDatabase;
/** A project user whose rule shows only the tasks it created and shared ones. */
let clerk: Principal;
const ids: Record<string, number> = {};
const FIELDS = ['name', 'priority', 'stage.name', 'tags.name', 'assignee'];

beforeAll(async () => {
  t = await testDatabase('full');
  clerk = await principal(t, 'Clerk', ['core.group_user', 'project.group_project_user']);
  await t.run(async () => {
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await RecordRule.create({
      name: 'Own or shared tasks', model: 'ProjectTask', filter: "Q(created_by=user_id) | Q(name__startswith='Shared')", groups: [projectUser!],
      perm_write: false, perm_create: false, perm_delete: false,
    });
    const project = await ProjectProject.create({ name: 'Compiled reads' });
    const tags = [(await ProjectTag.create({ name: 'red' })).id, (await ProjectTag.create({ name: 'blue' })).id];
    ids.project = project.id;
    ids.red = tags[0]!;
    ids.blue = tags[1]!;
    ids.shared = (await ProjectTask.create({ name: 'Shared task', project: project.id, tags: [tags[0]] })).id;
    ids.other = (await ProjectTask.create({ name: "Someone else's task", project: project.id })).id;
  });
  // Created by the clerk (its audit column is what the rule names).
  ids.own = await t.run(async () => (await ProjectTask.create({ name: 'Own task', project: ids.project, tags: [ids.red, ids.blue] })).id, { uid: clerk.uid });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const querysetRead = (id: number, fields = FIELDS) => new QuerySet(currentEnv().registry.meta('ProjectTask'))
  .public_only().with_archived().filter({ id }).order_by('id ASC').read(fields);
const compiledRead = (id: number, fields = FIELDS) => readById(currentEnv().registry.meta('ProjectTask'), id, fields, true);

describe('a fetch by id compiled once', () => {
  it("sends the very statement a queryset builds and answers the same record, the id changed from one read to the next", async () => {
    await runAs(t, clerk, async () => {
      for (const id of [ids.own!, ids.shared!, ids.other!]) {
        const expected = await t.countStatements(async () => expect(await compiledRead(id)).toEqual((await querysetRead(id))[0]));
        const [fromCompiled, fromQueryset] = expected.statements;
        expect(fromCompiled).toBe(fromQueryset);
      }
      // Reused: the hidden task read as none, the others with their rows (tags through JSON).
      expect(await compiledRead(ids.other!)).toBeUndefined();
      expect(await compiledRead(ids.own!)).toMatchObject({ id: ids.own, name: 'Own task', tags: [expect.objectContaining({ name: 'blue' }), expect.objectContaining({ name: 'red' })] });
      expect(await compiledRead(ids.shared!)).toMatchObject({ id: ids.shared, name: 'Shared task' });
    });
  });

  it("one principal's statement never answers for another", async () => {
    const admin = await principal(t, 'Admin', ['core.group_admin', 'core.group_user', 'project.group_project_manager']);
    // Each compiles its statement; reading in turns, each keeps its own rules.
    for (let round = 0; round < 2; round++) {
      expect(await runAs(t, admin, () => compiledRead(ids.other!))).toMatchObject({ id: ids.other });
      expect(await runAs(t, clerk, () => compiledRead(ids.other!))).toBeUndefined();
    }
    // One access profile acting for two users (the statement names user_id): compiled for the
    // clerk, it must not answer for the other, whose own tasks differ.
    const other = await principal(t, 'Clerk two', ['core.group_user', 'project.group_project_user']);
    await runAs(t, clerk, async (access) => {
      expect(await compiledRead(ids.own!)).toMatchObject({ id: ids.own });
      const asOther = { uid: other.uid, companyId: null, companyIds: [...access.companyIds], access: compileAccessPolicy(access), su: false };
      expect(await t.run(() => compiledRead(ids.own!), asOther)).toBeUndefined();
      expect(await t.run(() => compiledRead(ids.shared!), asOther)).toMatchObject({ id: ids.shared });
      expect(reusableReads(compileAccessPolicy(access), currentEnv().registry.meta('ProjectTask'))).toBe(2);
    });
  });

  it('over HTTP, a rule added after a key was remembered holds from the next fetch', async () => {
    const fetch = () => t.api('POST', `/api/fetch/ProjectTask/${ids.shared}`, { fields: FIELDS }, { authorization: `Bearer ${clerk.key}` });
    for (let i = 0; i < 3; i++) expect((await fetch()).statusCode).toBe(200);
    const ruleId = await t.run(async () => (await RecordRule.create({
      name: 'Nothing shared', model: 'ProjectTask', filter: "~Q(name__startswith='Shared')",
    })).id);
    try {
      const hidden = await fetch();
      expect(hidden.statusCode, hidden.body).toBe(404);
    } finally {
      await t.run(() => RecordRule.query({ id: ruleId }).delete());
    }
    expect((await fetch()).statusCode).toBe(200);
  });

  it("a remembered key's compiled fetch carries the request guard: revoked, it is refused at once", async () => {
    const reader = await principal(t, 'Reader', ['core.group_user', 'project.group_project_user']);
    const fetch = () => t.api('POST', `/api/fetch/ProjectTask/${ids.shared}`, { fields: ['name'] }, { authorization: `Bearer ${reader.key}` });
    for (let i = 0; i < 3; i++) expect((await fetch()).statusCode).toBe(200);
    const counted = await t.countStatements(async () => expect((await fetch()).statusCode).toBe(200));
    expect(counted.count, counted.statements.join('\n')).toBe(1);
    expect(counted.statements[0]).toMatch(READ_GUARD);
    await t.run(() => ApiKey.query({ id: reader.apiKeyId }).update({ revoked_at: new Date().toISOString() }));
    const refused = await fetch();
    expect(refused.statusCode).toBe(401);
  });

  it('a rule on the clock is compiled for every read, never reused', async () => {
    await t.run(async () => {
      const group = await Group.create({ name: 'Timed readers', identifier: 'test.group_timed_readers' });
      await RecordRule.create({ name: 'Not due in the past', model: 'ProjectTask', filter: 'Q(deadline=None) | Q(deadline__gte=today)', groups: [group.id] });
    });
    const timed = await principal(t, 'Timed', ['core.group_user', 'project.group_project_user', 'test.group_timed_readers']);
    await runAs(t, timed, async (access) => {
      const meta = currentEnv().registry.meta('ProjectTask');
      expect(await compiledRead(ids.shared!)).toMatchObject({ id: ids.shared });
      expect(await compiledRead(ids.shared!, ['name'])).toMatchObject({ id: ids.shared });
      expect(reusableReads(compileAccessPolicy(access), meta)).toBe(0);
    });
    // Without it, the same reads are compiled once each.
    await runAs(t, clerk, async (access) => {
      const meta = currentEnv().registry.meta('ProjectTask');
      await compiledRead(ids.shared!, ['name', 'stage']);
      expect(reusableReads(compileAccessPolicy(access), meta)).toBe(1);
    });
  });

  it('remembers a bounded number of field lists, whatever callers send', async () => {
    await runAs(t, clerk, async (access) => {
      const meta = currentEnv().registry.meta('ProjectTask');
      const names = [...meta.fields.values()].filter((f) => f.column && !f.options.internal).map((f) => f.name);
      for (let i = 0; i < 100; i++) {
        const fields = names.filter((_, k) => ((i + 1) >> (k % 7)) & 1);
        await compiledRead(ids.own!, fields.length ? fields : ['name']);
      }
      expect(reusableReads(compileAccessPolicy(access), meta)).toBeLessThanOrEqual(64);
      expect(reusableReads(compileAccessPolicy(access), meta)).toBeGreaterThan(0);
    });
  });

  it("bounds the whole worker's compiled reads too, whatever the number of profiles", async () => {
    await runAs(t, clerk, async (access) => {
      const meta = currentEnv().registry.meta('ProjectTask');
      await compiledRead(ids.own!);
      expect(reusableReads(compileAccessPolicy(access), meta)).toBe(1);
      // As many other profiles (a worker remembers thousands of credentials), one read each.
      const others = Array.from({ length: MAX_COMPILED_READS }, () => ({ ...access }));
      for (const other of others) await t.run(() => compiledRead(ids.own!), { uid: clerk.uid, companyId: null, companyIds: [...access.companyIds], access: compileAccessPolicy(other), su: false });
      expect(reusableReads(compileAccessPolicy(access), meta)).toBe(0); // dropped with the rest…
      expect(await compiledRead(ids.own!)).toMatchObject({ id: ids.own }); // …and compiled again when asked
      expect(reusableReads(compileAccessPolicy(access), meta)).toBe(1);
      const held = others.filter((other) => reusableReads(compileAccessPolicy(other), meta) === 1).length;
      expect(held).toBeLessThan(MAX_COMPILED_READS);
    });
  });
});
