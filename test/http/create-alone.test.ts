/**
 * The API's create of one record that needs nothing after its INSERT commits by itself
 * (src/orm/write/create-alone.ts): one round trip to PostgreSQL instead of two, the same answer,
 * and the same refusals — a create rule, or a link to a record the caller cannot see, refuses it
 * exactly as in a transaction, with nothing written. Round trips are PostgreSQL's ReadyForQuery
 * messages on the database's real connections, with the transaction status each reports.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { Company } from '../../modules/core/models/company.js';
import { Group } from '../../modules/core/models/group.js';
import { ModelAccess } from '../../modules/core/models/model_access.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ContactTag } from '../../modules/contacts/models/contact_tag.js';
import { ProjectProject } from '../../modules/project/models/project_project.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let userKey: string;
let statuses: string[] = [];
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await testDatabase('full');
  const database = (await t.platform.database(t.name)) as unknown as { pool: NodeJS.EventEmitter };
  const watched = new WeakSet<object>();
  database.pool.on('acquire', (client: { connection: NodeJS.EventEmitter }) => {
    if (watched.has(client)) return;
    watched.add(client);
    client.connection.on('readyForQuery', (m: { status: string }) => statuses.push(m.status));
  });
  userKey = (await t.run(() => createServiceAccountKey({
    name: 'alone user', groups: ['core.group_user', 'contacts.group_contacts_user', 'project.group_project_user'],
  }))).key;
  await t.run(async () => {
    const [contactsUser] = await Group.query({ identifier: 'contacts.group_contacts_user' }).ids();
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await ModelAccess.create({
      name: 'Projects / project users (create-alone test)', model: 'ProjectProject', group: projectUser,
      read_perm: true, write_perm: false, create_perm: true, delete_perm: false,
    });
    await RecordRule.create({
      name: 'Tags the user creates start with ok', model: 'ContactTag', filter: "Q(name__startswith='ok')", groups: [contactsUser],
      perm_read: false, perm_write: false, perm_delete: false,
    });
    ids.otherCompany = (await Company.create({ name: 'Alone Other Co' })).id;
    ids.foreignContact = (await Contact.create({ name: 'Foreign customer', company: ids.otherCompany })).id;
    ids.ownContact = (await Contact.create({ name: 'Own customer' })).id;
  });
  // Each key's first request resolves it in full (statements of their own); the rest start from it.
  for (const call of [(url: string, body: unknown) => t.api('POST', url, body), asUser]) {
    expect((await call('/api/query/ContactTag', { fields: ['name'], limit: 1 })).statusCode).toBe(200);
  }
});
afterAll(async () => { await t?.close(); });
beforeEach(() => { statuses = []; });

const asUser = (url: string, body: unknown) => t.api('POST', url, body, { authorization: `Bearer ${userKey}` });
const tagsNamed = (name: string) => t.run(() => ContactTag.query({ name }).count());
const projectsNamed = (name: string) => t.run(() => ProjectProject.query({ name }).count());

describe('a create that is its unit of work’s only statement', () => {
  it('returns only what its answer needs: the id, name and display name, not every stored column', async () => {
    const counted = await t.countStatements(async () => {
      const res = await t.api('POST', '/api/create/ContactTag', { name: 'Alone narrow', color: 4 });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ id: expect.any(Number), name: 'Alone narrow', display_name: 'Alone narrow' });
    });
    const insert = counted.statements.find((s) => s.startsWith('INSERT'))!;
    const returning = insert.slice(insert.indexOf('RETURNING'));
    expect(returning).toContain('"name"');
    for (const column of ['"color"', '"created_date"', '"updated_by_id"']) expect(returning).not.toContain(column);
  });

  it('is one round trip, answers as before, and is committed', async () => {
    for (const name of ['Alone one', 'Alone two']) {
      statuses = [];
      const res = await t.api('POST', '/api/create/ContactTag', { name, color: 3 });
      expect(res.statusCode, res.body).toBe(200);
      const answer = res.json();
      expect(answer).toEqual({ id: expect.any(Number), name, display_name: name });
      expect(statuses).toEqual(['I']); // no BEGIN, no COMMIT: PostgreSQL committed the INSERT itself
      const read = await t.api('POST', `/api/fetch/ContactTag/${answer.id}`, { fields: ['name', 'color'] });
      expect(read.json()).toMatchObject({ id: answer.id, name, color: 3 });
    }
  });

  it('a create that needs more than its INSERT runs in a transaction, as before', async () => {
    const res = await t.api('POST', '/api/create/Contact', { name: 'Needs more' });
    expect(res.statusCode, res.body).toBe(200);
    expect(statuses.length).toBeGreaterThan(1);
    expect(statuses.slice(0, -1).every((s) => s === 'T')).toBe(true);
    expect(statuses.at(-1)).toBe('I');
  });

  it('a constraint it breaks refuses it as before, with nothing written', async () => {
    const first = await t.api('POST', '/api/create/ContactTag', { name: 'Unique tag' });
    expect(first.statusCode, first.body).toBe(200);
    statuses = [];
    const again = await t.api('POST', '/api/create/ContactTag', { name: 'Unique tag' });
    expect(again.statusCode, again.body).toBe(400);
    expect(again.json()).toMatchObject({ error: 'ValidationError' });
    // Failed alone, so nothing to roll back; then the remembered key is confirmed by a check of its
    // own, since the failed statement did not confirm it.
    expect(statuses).toEqual(['I', 'I']);
    expect(await tagsNamed('Unique tag')).toBe(1);
  });

  it('a create rule refuses it as in a transaction (403, the same detail), with nothing written', async () => {
    const refused = await asUser('/api/create/ContactTag', { name: 'not ok' });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toMatchObject({
      error: 'AccessError', detail: expect.stringMatching(/^You may not create Contact Tag \d+: a record rule or company restriction forbids it$/),
    });
    // Refused alone (nothing written), then run in a transaction, whose check names the refusal.
    expect(statuses).toEqual(['I', 'T', 'I']);
    expect(await tagsNamed('not ok')).toBe(0);

    statuses = [];
    const allowed = await asUser('/api/create/ContactTag', { name: 'ok tag' });
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(statuses).toEqual(['I']);
    expect(await tagsNamed('ok tag')).toBe(1);
  });

  it('a link to a record the caller cannot see is refused as a missing one, with nothing written', async () => {
    const hidden = await asUser('/api/create/ProjectProject', { name: 'Hidden customer', customer: ids.foreignContact });
    expect(statuses).toEqual(['I', 'T', 'I']); // refused alone, then in a transaction that names the link
    const missing = await asUser('/api/create/ProjectProject', { name: 'Missing customer', customer: 99_999_999 });
    expect(hidden.statusCode, hidden.body).toBe(400);
    expect(missing.statusCode, missing.body).toBe(400);
    const { error, detail } = hidden.json();
    expect({ error, detail }).toEqual({ error: 'ValidationError', detail: `Field 'customer': Contact ${ids.foreignContact} does not exist` });
    expect(missing.json()).toMatchObject({ error, detail: "Field 'customer': Contact 99999999 does not exist" });
    expect(await projectsNamed('Hidden customer')).toBe(0);
    expect(await projectsNamed('Missing customer')).toBe(0);

    statuses = [];
    const visible = await asUser('/api/create/ProjectProject', { name: 'Own customer project', customer: ids.ownContact });
    expect(visible.statusCode, visible.body).toBe(200);
    expect(statuses).toEqual(['I']);
    expect(await projectsNamed('Own customer project')).toBe(1);
  });
});
