/**
 * Selections (CONTRACTS C1, spec §5 "selections and bulk endpoints do not bypass access"), under a
 * restricted API key: a selection resolves by the ordinary query path, so what it matches is
 * exactly what `/api/query` lists for the same key and filter — record rules (a group rule and a
 * global one), company isolation and the archivable default alike; `filter_str: ""` means every
 * visible record; `exclude_ids` removes; explicit ids behave as on the single-record routes (an
 * archived one is reached, a hidden or missing one is a 404 for the whole call, nothing written);
 * a selection naming nothing, or ids with a filter, is a 400. The bulk routes under the same key
 * keep rights (403), rules for writing (403), link visibility and companies (400 `item <i>: `).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Company } from '../../modules/core/models/company.js';
import { Group } from '../../modules/core/models/group.js';
import { ModelAccess } from '../../modules/core/models/model_access.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let key: string;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    const [contactsUser] = await Group.query({ identifier: 'contacts.group_contacts_user' }).ids();
    // Deleting is the managers' in the modules; granted here so that bulk-delete can be tried.
    await ModelAccess.create_many([
      { name: 'tasks: delete', model: 'ProjectTask', group: projectUser, read_perm: true, delete_perm: true },
      { name: 'contacts: delete', model: 'Contact', group: contactsUser, read_perm: true, delete_perm: true },
    ]);
    await RecordRule.create_many([
      { name: 'Important tasks', model: 'ProjectTask', filter: "Q(priority__in=['1', '2'])", groups: [projectUser] },
      { name: 'Shared tasks (read)', model: 'ProjectTask', filter: "Q(name__startswith='Sel shared')", groups: [projectUser], perm_write: false, perm_create: false, perm_delete: false },
      { name: 'No secrets', model: 'ProjectTask', filter: "~Q(name__icontains='secret')" },
    ]);
    const task = async (name: string, priority: string, extra: Record<string, unknown> = {}) =>
      (ids[name] = (await ProjectTask.create({ name, priority, ...extra })).id);
    await task('Sel urgent A', '2', { sequence: 2 });
    await task('Sel urgent B', '1', { sequence: 1 });
    await task('Sel normal', '0');
    await task('Sel secret urgent', '2');
    await task('Sel archived urgent', '2', { active: false });
    await task('Sel shared normal', '0');
    ids.mainCompany = (await Company.query().order_by('id ASC').first())!.id;
    ids.otherCompany = (await Company.create({ name: 'Selection Other Co' })).id;
    for (const [name, company] of [['Sel own', ids.mainCompany], ['Sel foreign', ids.otherCompany], ['Sel shared contact', null]] as const) {
      ids[name] = (await Contact.create({ name, company })).id;
    }
    ({ key } = await createServiceAccountKey({ name: 'selections', groups: ['core.group_user', 'project.group_project_user', 'contacts.group_contacts_user'] }));
  });
});
afterAll(async () => { await t?.close(); });

const asUser = (method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => t.api(method, url, body, { authorization: `Bearer ${key}` });

/** What `/api/query` lists for the restricted key, in its order. */
async function queried(model: string, body: Record<string, unknown>): Promise<number[]> {
  const res = await asUser('POST', `/api/query/${model}`, { fields: ['id'], limit: 2000, ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().map((r: { id: number }) => r.id);
}

/** The ids a selection resolves to, through a bulk update writing nothing but the audit columns. */
async function selected(model: string, selection: unknown): Promise<number[]> {
  const res = await asUser('PUT', `/api/bulk-update/${model}`, { selection, vals: {} });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().updated).toBe(res.json().ids.length);
  return res.json().ids;
}

const descriptions = () => t.run(async () => Object.fromEntries(
  (await ProjectTask.query("Q(name__startswith='Sel')").with_archived().read(['name', 'description'])).map((r) => [r.name, r.description])));

describe('a selection matches what /api/query lists for the same key', () => {
  it('record rules (a group rule and a global rule) and the archivable default', async () => {
    const filter = { filter_str: "Q(name__startswith='Sel')" };
    const expected = await queried('ProjectTask', filter);
    // Urgent B comes first: the model's default order (sequence) is the selection's order.
    expect(expected).toEqual([ids['Sel urgent B'], ids['Sel urgent A'], ids['Sel shared normal']]);
    const writable = { filter_str: "Q(name__startswith='Sel urgent')" };
    expect(await selected('ProjectTask', writable)).toEqual(await queried('ProjectTask', writable));
    const res = await asUser('POST', '/api/clone/ProjectTask', writable);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().map((r: any) => r.name)).toEqual(['Sel urgent B (copy)', 'Sel urgent A (copy)']);
    // The key's create rule (important tasks only) holds for copies too.
    const refused = await asUser('POST', '/api/clone/ProjectTask', filter);
    expect(refused.statusCode, refused.body).toBe(403);
    await t.run(() => ProjectTask.query("Q(name__endswith='(copy)')").delete());
  });

  it('a filter naming `active` reaches archived records, as on /api/query', async () => {
    const filter = { filter_str: "Q(name__startswith='Sel urgent') | (Q(name__startswith='Sel archived') & Q(active=False))" };
    const expected = await queried('ProjectTask', filter);
    expect(expected).toContain(ids['Sel archived urgent']);
    expect(await selected('ProjectTask', filter)).toEqual(expected);
  });

  it('company isolation: records of another company are not matched', async () => {
    const filter = { filter_str: "Q(name__startswith='Sel')" };
    const expected = await queried('Contact', filter);
    expect(expected.sort()).toEqual([ids['Sel own'], ids['Sel shared contact']].sort());
    expect((await selected('Contact', filter)).sort()).toEqual(expected);
  });

  it('`filter_str: ""` means every record the key can see; name_search and exclude_ids narrow it', async () => {
    expect((await selected('Contact', { filter_str: '' })).sort()).toEqual((await queried('Contact', {})).sort());
    expect(await selected('Contact', { filter_str: '' })).not.toContain(ids['Sel foreign']);
    const search = { name_search: ['urgent'] };
    expect(await selected('ProjectTask', search)).toEqual(await queried('ProjectTask', search));
    expect(await selected('ProjectTask', { ...search, exclude_ids: [ids['Sel urgent B']] })).toEqual([ids['Sel urgent A']]);
  });

  it('a filter the key could not use on /api/query is refused the same way', async () => {
    const res = await asUser('PUT', '/api/bulk-update/ProjectTask', { selection: { filter_str: 'Q(nope=1)' }, vals: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('QuerySyntaxError');
  });
});

describe('explicit ids behave as on the single-record routes', () => {
  it('an archived record is reached; duplicates collapse; the order is the order sent', async () => {
    expect(await selected('ProjectTask', { ids: [ids['Sel archived urgent'], ids['Sel urgent A'], ids['Sel archived urgent']] }))
      .toEqual([ids['Sel archived urgent'], ids['Sel urgent A']]);
  });

  it('a record hidden by a rule, by a global rule or by company isolation, or a missing one, is a 404 for the whole call, nothing written', async () => {
    const before = await descriptions();
    for (const hidden of [ids['Sel normal'], ids['Sel secret urgent'], 99999999]) {
      const sel = { ids: [ids['Sel urgent A'], hidden] };
      for (const res of [
        await asUser('PUT', '/api/bulk-update/ProjectTask', { selection: sel, vals: { description: 'leak' } }),
        await asUser('PUT', '/api/bulk-update/ProjectTask', [{ id: ids['Sel urgent A'], description: 'leak' }, { id: hidden, description: 'leak' }]),
        await asUser('DELETE', '/api/bulk-delete/ProjectTask', sel),
        await asUser('DELETE', '/api/bulk-delete/ProjectTask', sel.ids),
        await asUser('POST', '/api/clone/ProjectTask', sel),
      ]) {
        expect(res.statusCode, res.body).toBe(404);
        expect(res.json().detail).toMatch(new RegExp(`${hidden} does not exist`));
      }
    }
    const foreign = await asUser('PUT', '/api/bulk-update/Contact', { selection: { ids: [ids['Sel foreign']] }, vals: { city: 'x' } });
    expect(foreign.statusCode).toBe(404);
    expect(await descriptions()).toEqual(before);
    expect(await t.run(() => ProjectTask.query("Q(name__startswith='Sel')").with_archived().count())).toBe(6);
  });
});

describe('a selection that names nothing is refused', () => {
  it('{}, {exclude_ids} alone, name_search: [] and ids with a filter are 400s on every route', async () => {
    for (const selection of [{}, { exclude_ids: [ids['Sel urgent A']] }, { name_search: [] }, { name_search: ['  '] },
      { ids: [ids['Sel urgent A']], filter_str: '' }, { ids: [ids['Sel urgent A']], name_search: ['x'] }, { filter: "Q(name='x')" }]) {
      for (const res of [
        await asUser('PUT', '/api/bulk-update/ProjectTask', { selection, vals: { description: 'never' } }),
        await asUser('DELETE', '/api/bulk-delete/ProjectTask', selection),
        await asUser('POST', '/api/clone/ProjectTask', selection),
      ]) {
        expect(res.statusCode, `${JSON.stringify(selection)}: ${res.body}`).toBe(400);
      }
    }
    expect(Object.values(await descriptions())).not.toContain('never');
  });
});

describe('the bulk routes keep the key\'s rights, rules, links and companies', () => {
  it('a model the key has no right on is a 403 on every bulk route and clone', async () => {
    for (const [method, url, body] of [
      ['POST', '/api/bulk-create/ApiKey', []], ['PUT', '/api/bulk-update/ApiKey', []], ['DELETE', '/api/bulk-delete/ApiKey', []],
      ['POST', '/api/clone/ApiKey', { ids: [1] }], ['DELETE', '/api/bulk-delete/ProjectProject', []], ['POST', '/api/bulk-create/ProjectProject', [{ name: 'x' }]],
    ] as const) {
      const res = await asUser(method, url, body);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(403);
    }
  });

  it('a matched record the key may read but not change is a 403, nothing written', async () => {
    const res = await asUser('PUT', '/api/bulk-update/ProjectTask', { selection: { filter_str: "Q(name__startswith='Sel')" }, vals: { description: 'rule' } });
    expect(res.statusCode, res.body).toBe(403);
    expect(Object.values(await descriptions())).not.toContain('rule');
  });

  it('bulk-create refuses, naming the item, a link to a record hidden from the key and another company', async () => {
    const hiddenParent = await asUser('POST', '/api/bulk-create/ProjectTask', [
      { name: 'Sel new 1', priority: '2', parent: ids['Sel urgent A'] },
      { name: 'Sel new 2', priority: '2', parent: ids['Sel normal'] },
    ]);
    expect(hiddenParent.statusCode, hiddenParent.body).toBe(400);
    // Worded exactly like a link to a record that does not exist.
    expect(hiddenParent.json().detail).toBe(`item 1: Field 'parent': ProjectTask ${ids['Sel normal']} does not exist`);
    const foreign = await asUser('POST', '/api/bulk-create/Contact', [{ name: 'Sel c1' }, { name: 'Sel c2', company: ids.otherCompany }]);
    // A 403 as on the single route, naming the item.
    expect(foreign.statusCode, foreign.body).toBe(403);
    expect(foreign.json().detail).toMatch(/^item 1: .*not one of your companies/);
    // A create rule (important tasks only) refuses a normal task: the rule is the key's, not an item's value.
    expect((await asUser('POST', '/api/bulk-create/ProjectTask', [{ name: 'Sel new 3', priority: '0' }])).statusCode).toBe(403);
    expect(await t.run(() => ProjectTask.query("Q(name__startswith='Sel new')").count())).toBe(0);
    expect(await t.run(() => Contact.query("Q(name__startswith='Sel c')").count())).toBe(0);
  });

  it('bulk-delete by a selection deletes only what the key sees', async () => {
    const made = await asUser('POST', '/api/bulk-create/Contact', [{ name: 'Sel del 1' }, { name: 'Sel del 2' }]);
    expect(made.statusCode, made.body).toBe(200);
    const hidden = await t.run(async () => (await Contact.create({ name: 'Sel del foreign', company: ids.otherCompany })).id);
    const res = await asUser('DELETE', '/api/bulk-delete/Contact', { filter_str: "Q(name__startswith='Sel del')" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().ids.sort()).toEqual(made.json().map((r: any) => r.id).sort());
    expect(await t.run(() => Contact.query("Q(name__startswith='Sel del')").ids())).toEqual([hidden]);
  });
});
