/**
 * References respect access and companies (hardening issue, item 6), with two companies A and B:
 *
 * - a write may only name records its caller can read: a hidden one is refused exactly like a
 *   missing one (before, a restricted user could set a task's assignee, an order's customer, a
 *   line's product or a contact's parent to a record of another company it cannot see, and the
 *   different answers were an oracle for hidden ids);
 * - a record of one company refers only to records of that company or of none, whoever writes
 *   (Odoo's check_company; before, nothing checked it);
 * - every company-valued field is checked against the caller's companies (before, only `company`:
 *   an administrator of B could give itself A through `User.companies`);
 * - API keys follow their service account's company (before, an administrator of B listed and
 *   revoked A's keys);
 * - a bare link's name is null when the caller may not read the linked model at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAccessPolicy } from '../../src/access/access-policy.js';
import { loadAccessProfile } from '../../src/access/access-profile.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { AccessError, ValidationError } from '../../src/errors.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import type { Model } from '../../src/orm/model.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Company } from '../../modules/core/models/company.js';
import { Group } from '../../modules/core/models/group.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ServiceAccount } from '../../modules/core/models/service_account.js';
import { User } from '../../modules/core/models/user.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Account { key: string; serviceAccountId: number; uid: number; companyId: number }

let t: TestDatabase;
const ids: Record<string, number> = {};
/** A salesperson and project user of company A only (rules and company isolation restrict it). */
let userA: Account;
/** An administrator of company B only. */
let adminB: Account;
/** An administrator of both companies (sees everything; company consistency still binds it). */
let adminAB: Account;

const USER_GROUPS = ['core.group_user', 'project.group_project_user', 'contacts.group_contacts_user', 'sales.group_sale_user'];

async function account(name: string, groups: string[], companyId: number, companies = [companyId]): Promise<Account> {
  const made = await t.run(() => createServiceAccountKey({ name, groups }), { companyId });
  const uid = await t.run(async () => {
    const [sa] = await ServiceAccount.query({ id: made.serviceAccountId }).read(['user']);
    const uid = (sa!.user as { id: number }).id;
    await User.query({ id: uid }).update({ company: companyId, companies });
    return uid;
  });
  return { key: made.key, serviceAccountId: made.serviceAccountId, uid, companyId };
}

const as = (who: Account) => (method: Method, url: string, body?: unknown) =>
  t.api(method, url, body, { authorization: `Bearer ${who.key}` });

/** Model code running as `who` (its groups, rules and companies), one unit of work. */
async function runAs<T>(who: Account, fn: () => Promise<T>): Promise<T> {
  const db = await t.platform.database(t.name);
  const registry = await t.platform.registry(t.name);
  const access = await loadAccessProfile(db.executor, registry, { uid: who.uid, serviceAccountId: who.serviceAccountId });
  return t.run(fn, { uid: who.uid, companyId: who.companyId, companyIds: [...access.companyIds], access: compileAccessPolicy(access), su: false });
}

/** The detail of a missing reference, with the id replaced (hidden and missing must read the same). */
const shape = (detail: string) => detail.replace(/\d+/g, '#');

beforeAll(async () => {
  t = await testDatabase('full');
  await t.platform.install(t.name, { init: ['sales'] });
  await t.run(async () => {
    [ids.A] = await Company.query().order_by('id ASC').limit(1).ids();
    const usd = await modelOf<typeof Model>('Currency').query({ name: 'USD' }).with_archived().ids();
    ids.B = (await Company.create({ name: 'Beta Corp', currency: usd[0] })).id;
    await Company.query({ id: ids.A! }).update({ name: 'Alpha Inc' });
    ids.contactA = (await Contact.create({ name: 'Customer of A', company: ids.A })).id;
    ids.contactB = (await Contact.create({ name: 'Customer of B', company: ids.B })).id;
    ids.shared = (await Contact.create({ name: 'Shared customer' })).id;
    const Product = modelOf<typeof Model>('Product');
    const priced = { list_price: 10, currency: usd[0] };
    ids.productA = (await Product.create({ name: 'Widget A', company: ids.A, ...priced })).id;
    ids.productB = (await Product.create({ name: 'Widget B', company: ids.B, ...priced })).id;
    ids.productShared = (await Product.create({ name: 'Widget shared', ...priced })).id;
    ids.tagOpen = (await ProjectTag.create({ name: 'open tag' })).id;
    ids.tagSecret = (await ProjectTag.create({ name: 'secret tag' })).id;
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await RecordRule.create({ name: 'No secret tags', model: 'ProjectTag', filter: "~Q(name__startswith='secret')", groups: [projectUser] });
  });
  userA = await account('user of A', USER_GROUPS, ids.A!);
  adminB = await account('admin of B', ['core.group_admin', ...USER_GROUPS], ids.B!);
  adminAB = await account('admin of A and B', ['core.group_admin', ...USER_GROUPS], ids.A!, [ids.A!, ids.B!]);
  await t.run(async () => {
    // A confidential order of A and a user of A only (a salesperson of B may not sell for A).
    ids.orderA = (await modelOf<typeof Model>('SaleOrder').create({ customer: ids.contactA, company: ids.A, note: 'confidential A' })).id;
  });
});
afterAll(async () => { await t?.close(); });

describe('a hidden reference is refused exactly like a missing one', () => {
  const cases: [string, string, (hiddenId: number) => Record<string, unknown>, () => number][] = [
    ["a task's assignee", 'ProjectTask', (id) => ({ name: 'Task', assignee: id }), () => ids.contactB!],
    ["an order's customer", 'SaleOrder', (id) => ({ customer: id }), () => ids.contactB!],
    ["a contact's parent", 'Contact', (id) => ({ name: 'Employee', parent: id }), () => ids.contactB!],
    ["an order line's product (OneToMany line)", 'SaleOrder', (id) => ({ customer: ids.contactA, order_lines: [{ product: id, quantity: 1 }] }), () => ids.productB!],
    ["a task's tags (hidden by a record rule)", 'ProjectTask', (id) => ({ name: 'Tagged', tags: [ids.tagOpen, id] }), () => ids.tagSecret!],
  ];
  for (const [what, model, body, hidden] of cases) {
    it(`on create: ${what}`, async () => {
      const api = as(userA);
      const before = await t.run(() => modelOf<typeof Model>(model).query().with_archived().count());
      const concealed = await api('POST', `/api/create/${model}`, body(hidden()));
      const missing = await api('POST', `/api/create/${model}`, body(999_999));
      expect(concealed.statusCode, concealed.body).toBe(400);
      expect(missing.statusCode, missing.body).toBe(400);
      expect(concealed.json().error).toBe('ValidationError');
      expect(missing.json().error).toBe('ValidationError');
      expect(shape(concealed.json().detail)).toBe(shape(missing.json().detail));
      expect(concealed.json().detail).toMatch(new RegExp(`${hidden()} does not exist`));
      expect(await t.run(() => modelOf<typeof Model>(model).query().with_archived().count())).toBe(before);
    });
  }

  it('on update, through the API and through model code writing several records at once', async () => {
    const api = as(userA);
    const task = (await api('POST', '/api/create/ProjectTask', { name: 'Mine', priority: '2' })).json().id as number;
    const concealed = await api('PUT', `/api/update/ProjectTask/${task}`, { assignee: ids.contactB });
    const missing = await api('PUT', `/api/update/ProjectTask/${task}`, { assignee: 999_999 });
    expect([concealed.statusCode, missing.statusCode]).toEqual([400, 400]);
    expect(shape(concealed.json().detail)).toBe(shape(missing.json().detail));

    const failure = async (fn: () => Promise<unknown>) => {
      try {
        await runAs(userA, fn);
      } catch (err) {
        return err as Error;
      }
      throw new Error('expected a refusal');
    };
    const bulkCreate = await failure(() => ProjectTask.create_many([
      { name: 'Bulk 1', assignee: ids.contactA }, { name: 'Bulk 2', assignee: ids.contactB },
    ]));
    expect(bulkCreate).toBeInstanceOf(ValidationError);
    expect(bulkCreate.message).toBe(`Field 'assignee': Contact ${ids.contactB} does not exist`);
    const bulkUpdate = await failure(() => ProjectTask.query({ id: task }).update({ assignee: ids.contactB }));
    expect(bulkUpdate.message).toBe(`Field 'assignee': Contact ${ids.contactB} does not exist`);
    expect(await t.run(() => ProjectTask.query("Q(name__startswith='Bulk ')").count())).toBe(0);
    const [row] = await t.run(() => ProjectTask.query({ id: task }).read(['assignee']));
    expect(row!.assignee).toBeNull();
    // A visible record is accepted on the same paths.
    await runAs(userA, () => ProjectTask.query({ id: task }).update({ assignee: ids.contactA }));
  });

  it('company isolation hides records from administrators too: an administrator of B cannot reference A\'s customer', async () => {
    const res = await as(adminB)('POST', '/api/create/SaleOrder', { customer: ids.contactA });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe(`Field 'customer': Contact ${ids.contactA} does not exist`);
  });
});

describe('records of one company refer only to records of that company or of none (every caller)', () => {
  const clash = /belongs to company 'Alpha Inc', but its '(\w+)' .* belongs to company 'Beta Corp': a record may only refer to records of its own company or of none/;

  it('an order of A with a customer of B is refused for an administrator of both companies and for the platform', async () => {
    const res = await as(adminAB)('POST', '/api/create/SaleOrder', { customer: ids.contactB, company: ids.A });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('ValidationError');
    expect(res.json().detail).toMatch(clash);
    expect(res.json().detail).toMatch(/'customer' \(Contact 'Customer of B'\)/);
    const platform = await t.failure(() => modelOf<typeof Model>('SaleOrder').create({ customer: ids.contactB, company: ids.A }));
    expect(platform).toBeInstanceOf(ValidationError);
    expect(platform.message).toMatch(clash);
    // A shared customer (no company) and one of the same company are fine.
    expect((await as(adminAB)('POST', '/api/create/SaleOrder', { customer: ids.shared, company: ids.A })).statusCode).toBe(200);
    expect((await as(adminAB)('POST', '/api/create/SaleOrder', { customer: ids.contactB, company: ids.B })).statusCode).toBe(200);
  });

  it('a line may not sell a product of another company, on create and when lines are added', async () => {
    const api = as(adminAB);
    const created = await api('POST', '/api/create/SaleOrder', {
      customer: ids.shared, company: ids.A, order_lines: [{ product: ids.productShared }, { product: ids.productB }],
    });
    expect(created.statusCode, created.body).toBe(400);
    expect(created.json().detail).toMatch(/'product' \(Product 'Widget B'\) belongs to company 'Beta Corp'/);
    const order = (await api('POST', '/api/create/SaleOrder', { customer: ids.shared, company: ids.A, order_lines: [{ product: ids.productA }] })).json().id;
    const added = await api('PUT', `/api/update/SaleOrder/${order}`, { order_lines: [{ product: ids.productB }] });
    expect(added.statusCode).toBe(400);
    const lines = await t.run(() => modelOf<typeof Model>('SaleOrderLine').query({ order: order }).read(['product']));
    expect(lines.map((l) => (l.product as { id: number }).id)).toEqual([ids.productA]);
  });

  it('moving an order to another company is refused while its customer or its lines\' products belong to the first', async () => {
    const api = as(adminAB);
    const withCustomer = (await api('POST', '/api/create/SaleOrder', { customer: ids.contactA, company: ids.A })).json().id;
    const moved = await api('PUT', `/api/update/SaleOrder/${withCustomer}`, { company: ids.B });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().detail).toMatch(/'customer' \(Contact 'Customer of A'\) belongs to company 'Alpha Inc'/);
    // The lines take the order's company (a computed field): their products are checked then.
    const withLines = (await api('POST', '/api/create/SaleOrder', { customer: ids.shared, company: ids.A, order_lines: [{ product: ids.productA }] })).json().id;
    const movedLines = await api('PUT', `/api/update/SaleOrder/${withLines}`, { company: ids.B });
    expect(movedLines.statusCode, movedLines.body).toBe(400);
    expect(movedLines.json().detail).toMatch(/Sales Order Line .* belongs to company 'Beta Corp', but its 'product' \(Product 'Widget A'\) belongs to company 'Alpha Inc'/);
    const [order] = await t.run(() => modelOf<typeof Model>('SaleOrder').query({ id: withLines }).read(['company']));
    expect((order!.company as { id: number }).id).toBe(ids.A);
  });

  it('a user belongs to its companies: a salesperson of A only cannot sell for B, one of A and B can', async () => {
    const api = as(adminAB);
    const refused = await api('POST', '/api/create/SaleOrder', { customer: ids.shared, company: ids.B, user: userA.uid });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().detail).toMatch(/'user' \(User 'user of A'\) belongs to company 'Alpha Inc'/);
    expect((await api('POST', '/api/create/SaleOrder', { customer: ids.shared, company: ids.B, user: adminAB.uid })).statusCode).toBe(200);
  });

  it('a contact of A cannot work for a company contact of B', async () => {
    const res = await as(adminAB)('POST', '/api/create/Contact', { name: 'Mixed', company: ids.A, parent: ids.contactB });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/'parent' \(Contact 'Customer of B'\)/);
  });
});

describe('company-valued fields, single or list, are checked against the caller\'s companies', () => {
  it('an administrator of B cannot give itself or anyone company A, and so never reads A\'s orders', async () => {
    const api = as(adminB);
    const self = await api('PUT', `/api/update/User/${adminB.uid}`, { companies: [ids.A, ids.B] });
    expect(self.statusCode, self.body).toBe(403);
    expect(self.json()).toMatchObject({ error: 'AccessError', detail: `You may not set 'companies' of User records to company ${ids.A}: it is not one of your companies` });
    const created = await api('POST', '/api/create/User', { name: 'Planted', companies: [ids.A] });
    expect(created.statusCode).toBe(403);
    const single = await api('POST', '/api/create/User', { name: 'Planted', company: ids.A });
    expect(single.statusCode).toBe(403);
    const [user] = await t.run(() => User.query({ id: adminB.uid }).read(['companies']));
    expect((user!.companies as { id: number }[]).map((c) => c.id)).toEqual([ids.B]);
    expect(await t.run(() => User.query({ name: 'Planted' }).count())).toBe(0);
    const orders = (await api('POST', '/api/query/SaleOrder', { fields: ['note'] })).json();
    expect(orders.map((o: { note: string | null }) => o.note)).not.toContain('confidential A');
    // Its own company stays assignable.
    expect((await api('PUT', `/api/update/User/${adminB.uid}`, { companies: [ids.B] })).statusCode).toBe(200);
  });

  it('model code running as the administrator of B is refused the same way', async () => {
    let error: unknown;
    try {
      await runAs(adminB, () => User.query({ id: adminB.uid }).update({ companies: [ids.A, ids.B] }));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(AccessError);
  });
});

describe('API keys follow their service account\'s company', () => {
  it('an administrator of B lists only B\'s keys and cannot revoke A\'s', async () => {
    const api = as(adminB);
    const listed = await api('GET', '/api/api-keys');
    expect(listed.statusCode, listed.body).toBe(200);
    const names = listed.json().map((k: { name: string }) => k.name);
    expect(names).toContain('admin of B');
    expect(names).not.toContain('user of A');
    expect(names).not.toContain('admin of A and B');
    const keyOfA = await t.run(async () => (await modelOf<typeof Model>('ApiKey').query({ service_account: userA.serviceAccountId }).ids())[0]!);
    const revoke = await api('DELETE', `/api/api-keys/${keyOfA}`);
    expect(revoke.statusCode).toBe(404);
    expect((await api('POST', '/api/query/ApiKey', { filter_str: `Q(id=${keyOfA})` })).json()).toEqual([]);
    // A's key still works.
    expect((await as(userA)('POST', '/api/query/ProjectTask', { limit: 1 })).statusCode).toBe(200);
    // The administrator of A and B sees both.
    const all = (await as(adminAB)('GET', '/api/api-keys')).json().map((k: { name: string }) => k.name);
    expect(all).toEqual(expect.arrayContaining(['admin of B', 'user of A']));
  });
});

describe('bare links', () => {
  it('show a null name when the caller may not read the linked model; a link hidden by company or rule keeps its name', async () => {
    const scoped = await t.run(() => createServiceAccountKey({
      name: 'tasks only', groups: USER_GROUPS, scopes: [{ model: 'ProjectTask', perms: ['read', 'create'] }],
    }), { companyId: ids.A });
    const task = (await t.api('POST', '/api/create/ProjectTask', { name: 'Linked', priority: '2', assignee: ids.contactA })).json().id;
    const read = await t.api('POST', `/api/fetch/ProjectTask/${task}`, { fields: ['assignee', 'created_by'] }, { authorization: `Bearer ${scoped.key}` });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().assignee).toEqual({ id: ids.contactA, display_name: null });
    expect(read.json().created_by).toMatchObject({ display_name: null });
    const grouped = await t.api('POST', '/api/query/ProjectTask', { group_fields: ['assignee'], filter_str: `Q(id=${task})` },
      { authorization: `Bearer ${scoped.key}` });
    expect(grouped.json()[0].assignee).toEqual({ id: ids.contactA, display_name: null });

    // The user of A reads Contact, but not B's contacts: a link to one keeps its name (Odoo's choice).
    const linkedB = await t.run(async () => (await ProjectTask.create({ name: 'Linked to B', priority: '2', assignee: ids.contactB })).id);
    const visible = await as(userA)('POST', `/api/fetch/ProjectTask/${linkedB}`, { fields: ['assignee'] });
    expect(visible.json().assignee).toEqual({ id: ids.contactB, display_name: 'Customer of B' });
    // Reading more of it than the link needs the right to see the record.
    const deeper = await as(userA)('POST', `/api/fetch/ProjectTask/${linkedB}`, { fields: ['assignee.email'] });
    expect(deeper.json().assignee).toBeNull();
  });
});
