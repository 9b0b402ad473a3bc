/**
 * A unique value held by a record the caller cannot read (issue 25 item 6): the refusal names no
 * record and reads exactly as the refusal of a value a visible record holds — on create, bulk
 * create, and import (dry run and real) — for a contact of another company and for a task hidden
 * by a record rule. Before, it said "another record already has this value", which told a
 * company-1 user that a company-2 record existed. (That the value is refused at all cannot be
 * hidden while the key is unique across the table: docs/decisions.md.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Company } from '../../modules/core/models/company.js';
import { Group } from '../../modules/core/models/group.js';
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
    ({ key } = await createServiceAccountKey({ name: 'oracle', groups: ['core.group_user', 'project.group_project_user', 'contacts.group_contacts_user'] }));
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await RecordRule.create({ name: 'Important tasks', model: 'ProjectTask', filter: "Q(priority__in=['1', '2'])", groups: [projectUser] });
    const other = (await Company.create({ name: 'Oracle Co 2' })).id;
    const [main] = await Company.query().order_by('id ASC').limit(1).ids();
    ids.foreign = (await Contact.create({ name: 'Foreign secret contact', company: other, identifier: 'oracle.foreign' })).id;
    ids.own = (await Contact.create({ name: 'Own contact', company: main, identifier: 'oracle.own' })).id;
    ids.hiddenTask = (await ProjectTask.create({ name: 'Hidden secret task', priority: '0', identifier: 'oracle.hidden_task' })).id;
    ids.visibleTask = (await ProjectTask.create({ name: 'Visible task', priority: '2', identifier: 'oracle.visible_task' })).id;
  });
}, 240_000);
afterAll(async () => { await t?.close(); });

const asUser = (method: 'POST' | 'GET', url: string, body?: unknown) => t.api(method, url, body, { authorization: `Bearer ${key}` });
/** An error body as a client reads it (the test app runs in dev mode: its traceback left out). */
const refusal = (res: { json(): any }) => {
  const { traceback: _traceback, ...body } = res.json();
  return body;
};

/** Per model: a value held by a record the user cannot read, one held by a record the user reads, and the body of a new record. */
const CASES = [
  { model: 'Contact', hidden: 'oracle.foreign', visible: 'oracle.own', secret: 'Foreign secret contact', body: { name: 'Oracle new contact' } },
  { model: 'ProjectTask', hidden: 'oracle.hidden_task', visible: 'oracle.visible_task', secret: 'Hidden secret task', body: { name: 'Oracle new task', priority: '2' } },
] as const;

/** What a refusal may not say: that a record exists, or anything of the hidden one. */
function expectNamesNothing(text: string, secret: string, id: number): void {
  expect(text).not.toMatch(/another record|already (has|exists)/i);
  expect(text).not.toContain(secret);
  expect(text).not.toMatch(new RegExp(`\\b(id|#) ?${id}\\b`, 'i'));
}

describe.each(CASES)('a unique $model identifier held by a record the caller cannot read', ({ model, hidden, visible, secret, body }) => {
  const hiddenId = () => (model === 'Contact' ? ids.foreign! : ids.hiddenTask!);

  it('POST /api/create answers exactly as for a value a visible record holds, naming no record', async () => {
    // The user indeed cannot read the record holding the value.
    const query = await asUser('POST', `/api/query/${model}`, { fields: ['name'], filter_str: `Q(identifier='${hidden}')` });
    expect(query.statusCode, query.body).toBe(200);
    expect(query.json()).toEqual([]);
    const onHidden = await asUser('POST', `/api/create/${model}`, { ...body, identifier: hidden });
    const onVisible = await asUser('POST', `/api/create/${model}`, { ...body, identifier: visible });
    expect(onHidden.statusCode).toBe(400);
    expect(refusal(onHidden)).toEqual(refusal(onVisible));
    expect(refusal(onHidden)).toEqual({ detail: expect.stringContaining("'identifier' must be unique; this value cannot be used"), error: 'ValidationError', field: 'identifier' });
    expectNamesNothing(onHidden.json().detail, secret, hiddenId());
  });

  it('POST /api/bulk-create answers the same for both, with the item', async () => {
    const onHidden = await asUser('POST', `/api/bulk-create/${model}`, [{ ...body, identifier: `${hidden}.free` }, { ...body, identifier: hidden }]);
    const onVisible = await asUser('POST', `/api/bulk-create/${model}`, [{ ...body, identifier: `${visible}.free` }, { ...body, identifier: visible }]);
    expect(onHidden.statusCode).toBe(400);
    expect(refusal(onHidden)).toEqual(refusal(onVisible));
    expect(onHidden.json().detail).toMatch(/^item 1: .*'identifier' must be unique; this value cannot be used$/);
    expectNamesNothing(onHidden.json().detail, secret, hiddenId());
  });

  it('an import (dry run and real) refuses the row with the words of the create route, naming no record, and writes nothing of it', async () => {
    const created = await asUser('POST', `/api/create/${model}`, { ...body, identifier: visible });
    const expected = created.json().detail as string;
    const fields = ['identifier', ...Object.keys(body)];
    const row = (identifier: string) => [identifier, ...Object.values(body)];
    for (const dry_run of [true, false]) {
      const res = await asUser('POST', `/api/import/${model}`, { fields, data: [fields, row(hidden), row(`${hidden}.import_free_${dry_run}`)], dry_run });
      expect(res.statusCode, res.body).toBe(200);
      const answer = res.json();
      expect(answer.details.errors).toEqual([{ row: 1, field: 'identifier', message: expected }]);
      expect(answer.summary).toMatchObject(dry_run ? { would_create: 1, errors: 1 } : { created: 1, errors: 1 });
      expectNamesNothing(res.body, secret, hiddenId());
    }
    const Model = model === 'Contact' ? Contact : ProjectTask;
    const holders = await t.run(() => Model.query({ identifier: hidden }).with_archived().read(['name']));
    expect(holders.map((r) => r.name)).toEqual([secret]);
  });
});
