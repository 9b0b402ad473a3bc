/**
 * Bad values are refused whether a selection matches records or none (issue 25, "Hardening II"):
 * a bulk update by a selection matching nothing (`{ids: []}`, or a filter no record meets) checks
 * its values exactly as when records match — the same status and `detail` for a wrong type, an
 * emptied required field, a value over `max_length`, an unknown choice, a link to a record that
 * does not exist or that the caller cannot see (ManyToOne, ManyToMany, OneToMany lines and their
 * own values and links), a company the caller may not assign, an upload that is no base64 — and
 * keys that are unknown or not settable are still ignored (spec §4.4). Good values over nothing
 * answer 200 and write nothing, costing one statement for their links and none otherwise. Execute
 * over nothing checks a wizard's inputs likewise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Company } from '../../modules/core/models/company.js';
import { Country } from '../../modules/core/models/country.js';
import { Group } from '../../modules/core/models/group.js';
import { ModelAccess } from '../../modules/core/models/model_access.js';
import { RecordRule } from '../../modules/core/models/record_rule.js';
import { ProjectTag } from '../../modules/project/models/project_tag.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import type { Model } from '../../src/orm/model.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let key: string;
const ids: Record<string, number> = {};
const NO_SUCH_ID = 2_147_483_000;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    const [projectUser] = await Group.query({ identifier: 'project.group_project_user' }).ids();
    await ModelAccess.create_many([{ name: 'countries: write', model: 'Country', group: projectUser, read_perm: true, write_perm: true }]);
    await RecordRule.create({ name: 'No secrets', model: 'ProjectTask', filter: "~Q(name__icontains='secret')" });
    ids.task = (await ProjectTask.create({ name: 'Unmatched visible' })).id;
    ids.secret = (await ProjectTask.create({ name: 'Unmatched secret' })).id;
    ids.tag = (await ProjectTag.create({ name: 'Unmatched tag' })).id;
    ids.mainCompany = (await Company.query().order_by('id ASC').first())!.id;
    ids.otherCompany = (await Company.create({ name: 'Unmatched Other Co' })).id;
    ids.own = (await Contact.create({ name: 'Unmatched own', company: ids.mainCompany })).id;
    ids.foreign = (await Contact.create({ name: 'Unmatched foreign', company: ids.otherCompany })).id;
    ids.country = (await Country.query().order_by('id ASC').first())!.id;
    ({ key } = await createServiceAccountKey({ name: 'unmatched', groups: ['core.group_user', 'project.group_project_user', 'contacts.group_contacts_user'] }));
  });
}, 240_000);
afterAll(async () => { await t?.close(); });

const asUser = (method: 'POST' | 'PUT', url: string, body?: unknown) => t.api(method, url, body, { authorization: `Bearer ${key}` });

/**
 * A refusal as a client reads it: status, detail and error (dev mode's traceback differs with the
 * path that threw; `field` too — the database's refusal of a missing id names none).
 */
function refusal(res: { statusCode: number; json(): unknown }): unknown {
  const { detail, error } = res.json() as Record<string, unknown>;
  return { status: res.statusCode, detail, error };
}

/** Every record the calls could touch, as it is now. */
async function snapshot(): Promise<unknown> {
  return t.run(async () => ({
    tasks: await ProjectTask.query().with_archived().order_by('id ASC').read(['name', 'description', 'planned_hours', 'priority', 'parent', 'assignee', 'tags', 'subtask_count', 'updated_date']),
    contacts: await Contact.query().with_archived().order_by('id ASC').read(['company', 'updated_date']),
    countries: await Country.query().with_archived().order_by('id ASC').read(['flag', 'updated_date']),
  }));
}

const NOTHING = [{ ids: [] }, { filter_str: "Q(name='No record has this name')" }];

/** [label, model, vals, status, detail] — the refusal the write of the matched record gives. */
const CASES: [string, string, () => Record<string, unknown>, number, RegExp][] = [
  ['a wrong type', 'ProjectTask', () => ({ planned_hours: 'abc' }), 400, /planned_hours/],
  ['an emptied required field', 'ProjectTask', () => ({ name: '' }), 400, /Field 'name' of .* is required/],
  ['a value over max_length', 'ProjectTask', () => ({ name: 'x'.repeat(256) }), 400, /name/],
  ['an unknown choice', 'ProjectTask', () => ({ priority: '9' }), 400, /priority/],
  ['a ManyToOne that is no id', 'ProjectTask', () => ({ parent: 'abc' }), 400, /parent/],
  ['a link to a record that does not exist', 'ProjectTask', () => ({ parent: NO_SUCH_ID }), 400, /Field 'parent': ProjectTask \d+ does not exist/],
  ['a link to a record a rule hides', 'ProjectTask', () => ({ parent: ids.secret }), 400, /Field 'parent': ProjectTask \d+ does not exist/],
  ['a link to another company’s record', 'ProjectTask', () => ({ assignee: ids.foreign }), 400, /Field 'assignee': Contact \d+ does not exist/],
  ['a ManyToMany id that does not exist', 'ProjectTask', () => ({ tags: [ids.tag, NO_SUCH_ID] }), 400, /Field 'tags': ProjectTag \d+ does not exist/],
  ['a line value of a wrong type', 'ProjectTask', () => ({ subtasks: [{ name: 'Unmatched sub', planned_hours: 'abc' }] }), 400, /planned_hours/],
  ['a line without its required field', 'ProjectTask', () => ({ subtasks: [{ priority: '1' }] }), 400, /Field 'name' of .* is required/],
  ['a line linking a hidden record', 'ProjectTask', () => ({ subtasks: [{ name: 'Unmatched sub', assignee: ids.foreign }] }), 400, /Field 'assignee': Contact \d+ does not exist/],
  ['a line that is no line', 'ProjectTask', () => ({ subtasks: ['abc'] }), 400, /subtasks/],
  ['a company the caller may not assign', 'Contact', () => ({ company: ids.otherCompany }), 403, /not one of your companies/],
  ['an upload that is no base64', 'Country', () => ({ flag: { name: 'flag.svg', base64: '!!not base64!!' } }), 400, /not valid base64/],
  ['a bad value beside ignored keys', 'ProjectTask', () => ({ id: 5, no_such_field: 1, created_date: 'x', planned_hours: 'abc' }), 400, /planned_hours/],
];

/** The one record of `model` a write may reach, for the comparison with a selection that matches. */
const matched = (model: string) => ({ ProjectTask: ids.task, Contact: ids.own, Country: ids.country })[model]!;

describe('bulk-update by a selection matching nothing checks its values as when it matches', () => {
  for (const [label, model, vals, status, detail] of CASES) {
    it(`${label}: ${status}, the same answer for 0 records as for 1`, async () => {
      const before = await snapshot();
      const withRecord = await asUser('PUT', `/api/bulk-update/${model}`, { selection: { ids: [matched(model)] }, vals: vals() });
      expect(withRecord.statusCode, withRecord.body).toBe(status);
      expect(withRecord.json().detail).toMatch(detail);
      for (const selection of NOTHING) {
        const res = await asUser('PUT', `/api/bulk-update/${model}`, { selection, vals: vals() });
        expect(res.statusCode, `${JSON.stringify(selection)}: ${res.body}`).toBe(status);
        expect(refusal(res), JSON.stringify(selection)).toEqual(refusal(withRecord));
      }
      expect(await snapshot()).toEqual(before);
    });
  }

  it('a line id that does not exist is the 404 it is when records match', async () => {
    const vals = { subtasks: [NO_SUCH_ID] };
    const withRecord = await asUser('PUT', '/api/bulk-update/ProjectTask', { selection: { ids: [ids.task] }, vals });
    expect(withRecord.statusCode, withRecord.body).toBe(404);
    for (const selection of NOTHING) {
      const res = await asUser('PUT', '/api/bulk-update/ProjectTask', { selection, vals });
      expect(res.statusCode, res.body).toBe(404);
      expect(refusal(res)).toEqual(refusal(withRecord));
    }
  });

  it('good values over nothing: 200, nothing written, one statement for their links and none without', async () => {
    const before = await snapshot();
    const good = {
      description: 'never written', planned_hours: 3, priority: '1', parent: ids.task, assignee: ids.own, tags: [ids.tag],
      subtasks: [{ name: 'Unmatched sub', assignee: ids.own }], no_such_field: 1, created_date: 'ignored',
    };
    const plain = { description: 'never written', planned_hours: 3, priority: '1', no_such_field: 1 };
    const cost: Record<string, string[]> = {};
    // Once first, so that neither measure pays for loading the key's access profile.
    expect((await asUser('PUT', '/api/bulk-update/ProjectTask', { selection: { ids: [] }, vals: plain })).statusCode).toBe(200);
    for (const [name, vals] of [['links', good], ['plain', plain]] as const) {
      for (const selection of NOTHING) {
        const { statements: all } = await t.countStatements(async () => {
          const res = await asUser('PUT', '/api/bulk-update/ProjectTask', { selection, vals });
          expect(res.statusCode, res.body).toBe(200);
          expect(res.json()).toEqual({ updated: 0, ids: [] });
        });
        // The request's own: not the credential check (which touches the key's last use now and then).
        const statements = all.filter((s) => !s.includes('UPDATE api_key SET last_used_at'));
        expect(statements.filter((s) => /\bINSERT INTO\b|\bDELETE FROM\b|\bUPDATE\s+"?\w+"?\s+(AS\s+\w+\s+)?SET\b/i.test(s))).toEqual([]);
        cost[`${name} ${JSON.stringify(selection)}`] = statements;
      }
    }
    for (const selection of NOTHING) {
      const withLinks = cost[`links ${JSON.stringify(selection)}`]!;
      const without = cost[`plain ${JSON.stringify(selection)}`]!;
      // One statement reads every link's target (and carries the request guard, which the plain call settles alone).
      const reads = (list: string[]) => list.filter((s) => /FROM "(project_task|contact|project_tag)"/.test(s)).length;
      expect(reads(withLinks), withLinks.join('\n')).toBe(reads(without) + 1);
      expect(withLinks.length, withLinks.join('\n')).toBeLessThanOrEqual(without.length + 1);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('an upload over nothing is checked but not stored', async () => {
    const attachments = () => t.run(() => modelOf<typeof Model>('Attachment').query().with_archived().count());
    const before = await snapshot();
    const count = await attachments();
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64');
    const res = await asUser('PUT', '/api/bulk-update/Country', { selection: { ids: [] }, vals: { flag: { name: 'flag.svg', base64: svg } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await attachments()).toBe(count);
    expect(await snapshot()).toEqual(before);
  });
});

describe('execute over nothing checks a wizard’s inputs as over records', () => {
  const BAD: [string, () => Record<string, unknown>, RegExp][] = [
    ['a required input left out', () => ({}), /Field 'assignee' of Reassign tasks is required/],
    ['an input of a wrong type', () => ({ assignee: 'abc' }), /assignee/],
    ['an input naming a hidden record', () => ({ assignee: ids.foreign }), /Field 'assignee': Contact \d+ does not exist/],
    ['an impossible date', () => ({ assignee: ids.own, deadline: '2025-02-30' }), /deadline/],
  ];
  for (const [label, inputs, detail] of BAD) {
    it(`${label}: 400 with ids: [], a selection matching nothing, and one record alike`, async () => {
      const before = await snapshot();
      const call = (target: Record<string, unknown>) => asUser('POST', '/api/execute/ProjectTask/action_reassign', { ...target, request_body: { inputs: inputs() } });
      const withRecord = await call({ ids: [ids.task] });
      expect(withRecord.statusCode, withRecord.body).toBe(400);
      expect(withRecord.json().detail).toMatch(detail);
      for (const target of [{ ids: [] }, ...NOTHING.map((selection) => ({ selection }))]) {
        const res = await call(target);
        expect(res.statusCode, `${JSON.stringify(target)}: ${res.body}`).toBe(400);
        expect(refusal(res)).toEqual(refusal(withRecord));
      }
      expect(await snapshot()).toEqual(before);
    });
  }

  it('good inputs over nothing: 200, an empty result, nothing written', async () => {
    const before = await snapshot();
    for (const target of [{ ids: [] }, ...NOTHING.map((selection) => ({ selection }))]) {
      const res = await asUser('POST', '/api/execute/ProjectTask/action_reassign', { ...target, request_body: { inputs: { assignee: ids.own } } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().result).toEqual([]);
    }
    expect(await snapshot()).toEqual(before);
  });
});
