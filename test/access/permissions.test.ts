/**
 * Model rights, record rules and company isolation, through the HTTP API with a restricted API
 * key beside an administrator's (spec §5, credentials issue item 5/7). The project user's group
 * sees urgent/important tasks (a group rule for every right) plus "Shared" tasks (a second group
 * rule, read only: rules add up); a global rule hides "Secret" tasks from everyone.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Company } from '../../modules/core/models/company.js';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ServiceAccount } from '../../modules/core/models/service_account.js';
import { User } from '../../modules/core/models/user.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let restricted: { key: string; serviceAccountId: number };
const ids: Record<string, number> = {};
const USER_GROUPS = ['core.group_user', 'project.group_project_user', 'contacts.group_contacts_user'];

beforeAll(async () => {
  t = await testDatabase('full');
  restricted = await t.run(() => createServiceAccountKey({ name: 'restricted', groups: USER_GROUPS }));
  await t.run(async () => {
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await RecordRule.create_many([
      { name: 'Important tasks', model: 'ProjectTask', filter: "Q(priority__in=['1', '2'])", groups: [projectUser] },
      { name: 'Shared tasks (read)', model: 'ProjectTask', filter: "Q(name__startswith='Shared')", groups: [projectUser], perm_write: false, perm_create: false, perm_delete: false },
      { name: 'No secrets', model: 'ProjectTask', filter: "~Q(name__startswith='Secret')" },
    ]);
    ids.project = (await ProjectProject.create({ name: 'Permissions project' })).id;
    const task = async (name: string, priority: string, extra: Record<string, unknown> = {}) =>
      (ids[name] = (await ProjectTask.create({ name, priority, project: ids.project, planned_hours: 10, ...extra })).id);
    await task('Urgent one', '2');
    await task('Normal one', '0');
    await task('Shared normal', '0');
    await task('Secret urgent', '2');
    await task('Parent hidden', '0');
    await task('Urgent child', '2', { parent: ids['Parent hidden'] });
    ids.otherCompany = (await Company.create({ name: 'Other Co' })).id;
    [ids.mainCompany] = await Company.query().order_by('id ASC').limit(1).ids();
    ids.ownContact = (await Contact.create({ name: 'Own contact', company: ids.mainCompany })).id;
    ids.foreignContact = (await Contact.create({ name: 'Foreign contact', company: ids.otherCompany })).id;
  });
});
afterAll(async () => { await t?.close(); });

const asUser = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) =>
  t.api(method, url, body, { authorization: `Bearer ${restricted.key}` });
const asAdmin = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => t.api(method, url, body);

async function taskNames(call: typeof asUser, extra: Record<string, unknown> = {}): Promise<string[]> {
  const res = await call('POST', '/api/query/ProjectTask', { fields: ['name'], filter_str: `Q(project=${ids.project})`, order_by: ['name ASC'], ...extra });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().map((r: { name: string }) => r.name);
}

function expectDenied(res: { statusCode: number; json(): any }, detail: RegExp) {
  expect(res.statusCode).toBe(403);
  expect(res.json().error).toBe('AccessError');
  expect(res.json().detail).toMatch(detail);
}

describe('model rights (ModelAccess)', () => {
  it('a right no group of the key grants is a 403 on every route, and nothing is written', async () => {
    expectDenied(await asUser('POST', '/api/query/ApiKey', {}), /not allowed to read API Key records/);
    expectDenied(await asUser('GET', '/api/get_registry/ApiKey'), /not allowed to read API Key/);
    expectDenied(await asUser('POST', '/api/name_search/ApiKey', { term: 'x' }), /not allowed to read/);
    expectDenied(await asUser('POST', '/api/create/ProjectProject', { name: 'Not mine to create' }), /not allowed to create/);
    expectDenied(await asUser('PUT', `/api/update/ProjectProject/${ids.project}`, { name: 'Renamed' }), /not allowed to change/);
    expectDenied(await asUser('DELETE', `/api/delete/ProjectTask/${ids['Urgent one']}`), /not allowed to delete/);
    const [project] = await t.run(() => ProjectProject.query({ id: ids.project }).read(['name']));
    expect(project?.name).toBe('Permissions project');
    expect(await t.run(() => ProjectProject.query("Q(name='Not mine to create')").count())).toBe(0);
    expect(await t.run(() => ProjectTask.query({ id: ids['Urgent one'] }).count())).toBe(1);
    // The administrator holds those rights.
    expect((await asAdmin('POST', '/api/query/ApiKey', {})).statusCode).toBe(200);
  });

  it('reading through a relation into a model the key may not read is a 403', async () => {
    // Filter, nested field and ordering paths all need the right to read the model they reach.
    expectDenied(await asUser('POST', '/api/query/ServiceAccount', {}), /not allowed to read Service Account/);
    expectDenied(await asUser('POST', '/api/query/ApiKey', { fields: ['service_account.name'] }), /not allowed to read API Key/);
  });

  it('a key carries its account\'s groups, not those of the account\'s user', async () => {
    await t.run(async () => {
      const [account] = await ServiceAccount.query({ id: restricted.serviceAccountId }).read(['user']);
      const [admin] = await Group.query({ identifier: 'core.group_admin' }).ids();
      await User.query({ id: (account!.user as { id: number }).id }).update({ groups: [admin] });
    });
    expectDenied(await asUser('POST', '/api/query/ApiKey', {}), /not allowed to read/);
  });
});

describe('record rules', () => {
  it('a query lists only what the rules let the key read; global rules bind the administrator too', async () => {
    expect(await taskNames(asUser)).toEqual(['Shared normal', 'Urgent child', 'Urgent one']);
    expect(await taskNames(asAdmin)).toEqual(['Normal one', 'Parent hidden', 'Shared normal', 'Urgent child', 'Urgent one']);
  });

  it('counts, groups, aggregates and name_search see the same records', async () => {
    const body = { filter_str: `Q(project=${ids.project})`, counter: true, footer_aggregates: ['planned_hours'] };
    const counted = (await asUser('POST', '/api/query/ProjectTask', body)).json();
    expect(counted.count).toBe(3);
    expect(counted.aggregates).toEqual({ planned_hours: 30 });
    const groups = (await asUser('POST', '/api/query/ProjectTask', { filter_str: `Q(project=${ids.project})`, group_fields: ['priority'] })).json();
    expect(groups.map((g: any) => [g.priority, g.count])).toEqual([['0', 1], ['2', 2]]);
    const found = (await asUser('POST', '/api/name_search/ProjectTask', { term: 'one' })).json();
    expect(found.map((r: any) => r.display_name)).toEqual(['Urgent one']);
  });

  it('a record the key cannot read does not exist for it: fetch, update, delete and execute are 404', async () => {
    expect((await asUser('POST', `/api/fetch/ProjectTask/${ids['Urgent one']}`, { fields: ['name'] })).statusCode).toBe(200);
    for (const res of [
      await asUser('POST', `/api/fetch/ProjectTask/${ids['Normal one']}`, {}),
      await asUser('PUT', `/api/update/ProjectTask/${ids['Normal one']}`, { name: 'Seen after all' }),
      await asUser('POST', `/api/execute/ProjectTask/action_close`, { ids: [ids['Normal one']] }),
      await asAdmin('POST', `/api/fetch/ProjectTask/${ids['Secret urgent']}`, {}),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error).toBe('NotFound');
    }
    const [normal] = await t.run(() => ProjectTask.query({ id: ids['Normal one'] }).read(['name']));
    expect(normal?.name).toBe('Normal one');
  });

  it('a record the key can read but not change is a 403 on update, and stays unchanged', async () => {
    const res = await asUser('PUT', `/api/update/ProjectTask/${ids['Shared normal']}`, { name: 'Changed anyway' });
    expectDenied(res, /may not change Task|may not change/);
    const [shared] = await t.run(() => ProjectTask.query({ id: ids['Shared normal'] }).read(['name']));
    expect(shared?.name).toBe('Shared normal');
    const ok = await asUser('PUT', `/api/update/ProjectTask/${ids['Urgent one']}`, { description: 'mine to change' });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a created record must pass the create rules', async () => {
    const refused = await asUser('POST', '/api/create/ProjectTask', { name: 'Low priority by me', priority: '0', project: ids.project });
    expectDenied(refused, /may not create/);
    expect(await t.run(() => ProjectTask.query("Q(name='Low priority by me')").with_archived().count())).toBe(0);
    const created = await asUser('POST', '/api/create/ProjectTask', { name: 'Urgent by me', priority: '2', project: ids.project });
    expect(created.statusCode, created.body).toBe(200);
  });

  it('create rules that read only the new row ride in the INSERT\'s RETURNING; rules through a relation are checked after it', async () => {
    // Kept out of the project the other tests list.
    const project = await t.run(async () => (await ProjectProject.create({ name: 'Permissions of creates' })).id);
    await asUser('POST', '/api/query/ProjectTask', { limit: 1 }); // the key remembered: its check rides in the first statement
    // The rules on priority and name read the row's own columns: BEGIN, INSERT, COMMIT. (Each
    // counted create gives its stage, null here: without one the default looks the first stage up.)
    let created: any;
    const inline = await t.countStatements(async () => {
      created = await asUser('POST', '/api/create/ProjectTask', { name: 'Inline checked', priority: '1', project, stage: null });
    });
    expect(created.statusCode, created.body).toBe(200);
    // (and the creator following the task: messaging's one INSERT)
    expect(inline.count, inline.statements.join('\n')).toBe(4);
    expect(inline.statements[1]).toMatch(/^INSERT INTO "project_task"[\s\S]*AS "__allowed"/);
    // Refused by the same column: the same 403, nothing written, whether one record or one of a batch.
    const refusedInline = await t.countStatements(async () => {
      expectDenied(await asUser('POST', '/api/create/ProjectTask', { name: 'Inline refused', priority: '0', project }), /may not create Task \d+: a record rule/);
    });
    expect(refusedInline.statements.some((s) => /^SELECT[\s\S]*AS allowed/.test(s))).toBe(false);
    const batch = await asUser('POST', '/api/bulk-create/ProjectTask', [
      { name: 'Batch allowed', priority: '2', project }, { name: 'Batch refused', priority: '0', project },
    ]);
    expectDenied(batch, /^item 1: You may not create Task \d+: a record rule/);
    expect(await t.run(() => ProjectTask.query("Q(name__in=['Inline refused', 'Batch allowed', 'Batch refused'])").with_archived().count())).toBe(0);

    // A rule that follows a relation (the project's name) reaches another table: a SELECT after the
    // INSERT. Global, so it binds on top of the group rules (which add up).
    const ruleId = await t.run(async () => (await RecordRule.create({
      name: 'Only in permission projects', model: 'ProjectTask', filter: "Q(project__name__startswith='Permissions')",
      perm_read: false, perm_write: false, perm_delete: false,
    })).id);
    try {
      const otherProject = await t.run(async () => (await ProjectProject.create({ name: 'Elsewhere' })).id);
      await asUser('POST', '/api/query/ProjectTask', { limit: 1 }); // the security version moved: remember the key again
      const through = await t.countStatements(async () => {
        created = await asUser('POST', '/api/create/ProjectTask', { name: 'Checked after', priority: '2', project, stage: null });
      });
      expect(created.statusCode, created.body).toBe(200);
      expect(through.count, through.statements.join('\n')).toBe(5);
      expect(through.statements[1]).not.toContain('__allowed');
      expect(through.statements[2]).toMatch(/^SELECT[\s\S]*AS allowed/);
      expectDenied(await asUser('POST', '/api/create/ProjectTask', { name: 'Urgent elsewhere', priority: '2', project: otherProject }), /may not create/);
      expect(await t.run(() => ProjectTask.query("Q(name='Urgent elsewhere')").with_archived().count())).toBe(0);
    } finally {
      await t.run(() => RecordRule.query({ id: ruleId }).delete());
    }
  });

  it('relations lead only to readable records: nested lists, links, filters and ordering through them', async () => {
    const [project] = (await asUser('POST', '/api/query/ProjectProject', { fields: ['tasks.name'], filter_str: `Q(id=${ids.project})` })).json();
    expect(project.tasks.map((x: any) => x.name).sort()).toEqual(['Shared normal', 'Urgent by me', 'Urgent child', 'Urgent one']);
    const [child] = (await asUser('POST', '/api/query/ProjectTask', { fields: ['name', 'parent.name'], filter_str: "Q(name='Urgent child')" })).json();
    expect(child.parent).toBeNull();
    const [adminChild] = (await asAdmin('POST', '/api/query/ProjectTask', { fields: ['name', 'parent.name'], filter_str: "Q(name='Urgent child')" })).json();
    expect(adminChild.parent.name).toBe('Parent hidden');
    // Probing a hidden record's fields through a filter finds nothing.
    expect(await taskNames(asUser, { filter_str: "Q(parent__name='Parent hidden')" })).toEqual([]);
    expect(await taskNames(asAdmin, { filter_str: "Q(parent__name='Parent hidden')" })).toEqual(['Urgent child']);
    // A to-many traversal sees only readable records.
    const probe = (call: typeof asUser) => call('POST', '/api/query/ProjectProject', { filter_str: "Q(tasks__name='Normal one')" });
    expect((await probe(asUser)).json()).toEqual([]);
    expect((await probe(asAdmin)).json()).toHaveLength(1);
    const subtasks = (call: typeof asUser) => call('POST', '/api/query/ProjectTask', { fields: ['name', 'subtask_count'], filter_str: "Q(name='Parent hidden')" });
    expect((await subtasks(asUser)).json()).toEqual([]);
  });

  it('a rule whose filter does not parse matches nothing (fails closed)', async () => {
    const ruleId = await t.run(async () => {
      const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
      return (await RecordRule.create({ name: 'Broken', model: 'ProjectStage', filter: 'Q(name=', groups: [projectUser] })).id;
    });
    expect((await asUser('POST', '/api/query/ProjectStage', {})).json()).toEqual([]);
    expect((await asAdmin('POST', '/api/query/ProjectStage', {})).json().length).toBeGreaterThan(0);
    await t.run(() => RecordRule.query({ id: ruleId }).delete());
    expect((await asUser('POST', '/api/query/ProjectStage', {})).json().length).toBeGreaterThan(0);
  });

  it('a change of rights or rules holds from the very next request', async () => {
    expect((await asUser('POST', '/api/query/ProjectTask', {})).statusCode).toBe(200);
    const [projectUser] = await t.run(() => Group.query({ identifier: 'project.group_project_user' }).ids());
    const original = await t.run(async () => {
      const [account] = await ServiceAccount.query({ id: restricted.serviceAccountId }).read(['groups']);
      return (account!.groups as { id: number }[]).map((g) => g.id);
    });
    await t.run(() => ServiceAccount.query({ id: restricted.serviceAccountId }).update({ groups: original.filter((g) => g !== projectUser) }));
    expectDenied(await asUser('POST', '/api/query/ProjectTask', {}), /not allowed to read Task|not allowed to read/);
    await t.run(() => ServiceAccount.query({ id: restricted.serviceAccountId }).update({ groups: original }));
    expect(await taskNames(asUser)).toContain('Urgent one');
    // A new global rule narrows the very next answer.
    const ruleId = await t.run(async () => (await RecordRule.create({ name: 'Only children', model: 'ProjectTask', filter: 'Q(parent__isnull=False)' })).id);
    expect(await taskNames(asUser)).toEqual(['Urgent child']);
    await t.run(() => RecordRule.query({ id: ruleId }).delete());
    expect(await taskNames(asUser)).toContain('Urgent one');
  });
});

describe('company isolation', () => {
  it('records of a company the key is not allowed are invisible, and cannot be written there', async () => {
    const listed = (await asUser('POST', '/api/query/Contact', { fields: ['name'], filter_str: "Q(name__endswith='contact')" })).json();
    expect(listed.map((c: any) => c.name)).toEqual(['Own contact']);
    expect((await asUser('POST', `/api/fetch/Contact/${ids.foreignContact}`, {})).statusCode).toBe(404);
    expectDenied(await asUser('POST', '/api/create/Contact', { name: 'Planted', company: ids.otherCompany }), /not one of your companies/);
    expectDenied(await asUser('PUT', `/api/update/Contact/${ids.ownContact}`, { company: ids.otherCompany }), /not one of your companies/);
    expect(await t.run(() => Contact.query("Q(name='Planted')").with_archived().count())).toBe(0);
    const [own] = await t.run(() => Contact.query({ id: ids.ownContact }).read(['company']));
    expect((own!.company as { id: number }).id).toBe(ids.mainCompany);
    // A record without a company is everybody's.
    expect((await asUser('POST', '/api/create/Contact', { name: `No company ${randomBytes(2).toString('hex')}` })).statusCode).toBe(200);
  });
});

describe('permission cost', () => {
  it('listing 50 records as a restricted key costs the same statements as for an administrator', async () => {
    await t.run(async () => {
      const stages = await ProjectStage.query().ids();
      const tags = (await ProjectTag.create_many([{ name: 'perm a' }, { name: 'perm b' }])).map((r) => r.id);
      const contact = await Contact.create({ name: 'Perm assignee' });
      await ProjectTask.create_many(Array.from({ length: 50 }, (_, i) => ({
        name: `Bulk ${String(i).padStart(2, '0')}`, priority: '1', stage: stages[i % stages.length], assignee: contact.id, tags,
      })));
    });
    const list = (call: typeof asUser) => t.countStatements(async () => {
      const res = await call('POST', '/api/query/ProjectTask', {
        fields: ['name', 'assignee.name', 'tags.name', 'stage.name'], filter_str: "Q(name__startswith='Bulk')", limit: 50,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toHaveLength(50);
    });
    await list(asUser);
    await list(asAdmin);
    const user = await list(asUser);
    const admin = await list(asAdmin);
    expect(user.count, user.statements.join('\n')).toBe(admin.count);
    expect(user.count).toBe(1);
  });
});
