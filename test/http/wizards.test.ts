/**
 * Wizards (issue 11 item 5, CONTRACTS C1): `POST /api/action-meta/{model}/{method}` describes an
 * API method's dialog — registry entries of its inputs, arch, defaults from the declared defaults
 * and the wizard's `defaults` method over `context.active_ids` — and executing the method checks
 * `inputs` against the wizard's fields first (400 naming the field, nothing run), then passes the
 * converted values. Shown on project's reassign wizard and on a probe wizard with every input type.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Company } from '../../modules/core/models/company.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { databaseFingerprint } from '../support/database-fingerprint.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODELS = `
import { Model, fields } from 'fieldforge';

/** A wizard with an input of every type, whose method answers what it received. */
export class WizardProbe extends Model {
  static override _api_methods = ['action_echo', 'echo_model', 'action_plain'];
  static override _wizards = {
    action_echo: {
      title: 'Echo',
      fields: {
        partner: fields.ManyToOne('Contact', { required: true }),
        contacts: fields.ManyToMany('Contact'),
        when: fields.Date(),
        at: fields.Datetime(),
        amount: fields.Monetary(),
        ratio: fields.Float({ precision: 1 }),
        kind: fields.Selection({ choices: [['a', 'Alpha'], ['b', 'Beta']], default: 'a' }),
        flag: fields.Boolean(),
        count: fields.Integer({ default: () => 3 }),
        note: fields.Text(),
      },
    },
    echo_model: { title: 'Echo (model-level)', fields: { when: fields.Date({ required: true }) } },
  };
  static override fields = { name: fields.Char() };

  action_echo(inputs: Record<string, unknown>) { return { inputs }; }
  static echo_model(inputs: Record<string, unknown>) { return { inputs }; }
  action_plain(inputs: Record<string, unknown>) { return { inputs }; }
}
`;

let t: TestDatabase;
let root: string;
let plainUser: string;
const ids: Record<string, number> = {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-wizards-'));
  await writeProbeModule(root, 'wizard_probe', {
    'manifest.yaml': 'name: wizard_probe\nidentifier: wizard_probe\ndependencies: [core, contacts]\n',
    'models/index.ts': PROBE_MODELS,
    'security/access.yaml': adminAccessYaml(['WizardProbe']),
  });
  t = await testDatabase('full', [root]);
  await t.platform.install(t.name, { init: ['wizard_probe'] });
  plainUser = (await t.run(() => createServiceAccountKey({ name: 'plain', groups: ['core.group_user'] }))).key;
  ids.alice = await create('Contact', { name: 'Alice' });
  ids.bob = await create('Contact', { name: 'Bob' });
  // A contact of another company: the test key (first company) cannot see it.
  ids.hidden = await t.run(async () => {
    const other = await Company.create({ name: 'Elsewhere Ltd' });
    return (await modelOf('Contact').create({ name: 'Hidden', company: other.id })).id;
  });
  ids.t1 = await create('ProjectTask', { name: 'Paint', assignee: ids.alice, deadline: '2026-03-01' });
  ids.t2 = await create('ProjectTask', { name: 'Sand', assignee: ids.alice, deadline: '2026-03-01' });
  ids.t3 = await create('ProjectTask', { name: 'Varnish', assignee: ids.bob, deadline: '2026-03-09' });
  ids.probe = await create('WizardProbe', { name: 'probe' });
});
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function create(model: string, vals: Record<string, unknown>): Promise<number> {
  const res = await t.api('POST', `/api/create/${model}`, vals);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as number;
}

const meta = (model: string, method: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  t.api('POST', `/api/action-meta/${model}/${method}`, body, headers);
const execute = (model: string, method: string, body: Record<string, unknown>) => t.api('POST', `/api/execute/${model}/${method}`, body);

describe('action-meta', () => {
  it("describes project's reassign wizard: inputs as registry entries, its arch, defaults shared by the selected tasks", async () => {
    const res = await meta('ProjectTask', 'action_reassign', { context: { active_ids: [ids.t1, ids.t2] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      model: 'ProjectTask',
      method: 'action_reassign',
      title: 'Reassign tasks',
      fields: {
        assignee: { type: 'ManyToOne', label: 'Assign to', required: true, related_model: 'Contact' },
        deadline: { type: 'Date', label: 'New deadline', description: "Leave empty to keep each task's deadline" },
      },
      arch: [{ row: [{ field: { name: 'assignee' } }, { field: { name: 'deadline' } }] }],
      // Both tasks are Alice's, due the same day: the dialog proposes that (a link as a fetch shows one).
      defaults: { assignee: { id: ids.alice, display_name: 'Alice' }, deadline: '2026-03-01' },
    });
    // Tasks that share nothing: no proposal.
    const mixed = await meta('ProjectTask', 'action_reassign', { context: { active_ids: [ids.t1, ids.t3] } });
    expect(mixed.json().defaults).toEqual({});
    expect((await meta('ProjectTask', 'action_reassign', {})).json().defaults).toEqual({});
  });

  it('combines declared defaults (values and functions) with every input type described', async () => {
    const res = await meta('WizardProbe', 'action_echo');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.defaults).toEqual({ kind: 'a', count: 3 });
    expect(body.fields.kind).toEqual({ type: 'Selection', label: 'Kind', default: 'a', choices: [['a', 'Alpha'], ['b', 'Beta']] });
    expect(body.fields.contacts).toEqual({ type: 'ManyToMany', label: 'Contacts', related_model: 'Contact' });
    expect(body.arch).toEqual(Object.keys(body.fields).map((name) => ({ field: { name } })));
  });

  it('404 for a method without wizard or unknown, 400 for malformed active_ids, 403 without read right', async () => {
    expect((await meta('ProjectTask', 'action_close')).statusCode).toBe(404);
    expect((await meta('ProjectTask', 'nope')).statusCode).toBe(404);
    expect((await meta('NoSuchModel', 'action_reassign')).statusCode).toBe(404);
    const bad = await meta('ProjectTask', 'action_reassign', { context: { active_ids: 'all' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/active_ids/);
    const denied = await meta('ProjectTask', 'action_reassign', {}, { authorization: `Bearer ${plainUser}` });
    expect(denied.statusCode).toBe(403);
  });
});

describe('executing a wizard', () => {
  it('reassigns and reschedules the selected tasks; the dialog closes and the list reloads', async () => {
    const res = await execute('ProjectTask', 'action_reassign', {
      selection: { ids: [ids.t1, ids.t3] },
      // A link as the defaults give it ({id, display_name}) is taken as its id.
      request_body: { inputs: { assignee: { id: ids.bob, display_name: 'Bob' }, deadline: '2026-04-15' }, context: {} },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toEqual([{ close: true, reload: true }, { close: true, reload: true }]);
    expect(res.headers['x-action-close']).toBe('1');
    expect(res.headers['x-action-reload']).toBe('1');
    const tasks = (await t.api('POST', '/api/query/ProjectTask', { filter_str: `Q(id__in=[${ids.t1}, ${ids.t2}, ${ids.t3}])`, fields: ['assignee', 'deadline'], order_by: ['id ASC'] })).json();
    expect(tasks.map((x: any) => [x.assignee.id, x.deadline])).toEqual([[ids.bob, '2026-04-15'], [ids.alice, '2026-03-01'], [ids.bob, '2026-04-15']]);
    // Without a deadline, each task keeps its own.
    await execute('ProjectTask', 'action_reassign', { ids: [ids.t2], request_body: { inputs: { assignee: ids.bob } } });
    const t2 = (await t.api('POST', `/api/fetch/ProjectTask/${ids.t2}`, { fields: ['assignee', 'deadline'] })).json();
    expect([t2.assignee.id, t2.deadline]).toEqual([ids.bob, '2026-03-01']);
  });

  it('refuses bad inputs with a 400 naming the field before the method runs: nothing is written', async () => {
    const before = await databaseFingerprint(t);
    const cases: [Record<string, unknown>, RegExp | string][] = [
      [{}, "Field 'assignee' of Reassign tasks is required"],
      [{ assignee: null }, "Field 'assignee' of Reassign tasks is required"],
      [{ assignee: 'Bob' }, /field 'assignee' of ProjectTask\.action_reassign: expected a Contact id/],
      [{ assignee: ids.bob, deadline: '2026-02-30' }, /field 'deadline' of ProjectTask\.action_reassign: expected a real calendar date/],
      // A contact the caller cannot see is refused exactly like one that does not exist.
      [{ assignee: ids.hidden }, `Field 'assignee': Contact ${ids.hidden} does not exist`],
      [{ assignee: 999_999 }, "Field 'assignee': Contact 999999 does not exist"],
    ];
    for (const [inputs, detail] of cases) {
      const res = await execute('ProjectTask', 'action_reassign', { ids: [ids.t1], request_body: { inputs } });
      expect(res.statusCode, JSON.stringify(inputs)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'ValidationError' });
      expect(res.json().detail).toMatch(detail);
    }
    expect(await databaseFingerprint(t)).toEqual(before);
    // The records are found first: a missing one is a 404 whatever the inputs.
    expect((await execute('ProjectTask', 'action_reassign', { ids: [999_999], request_body: { inputs: {} } })).statusCode).toBe(404);
  });

  it('passes the method the converted values: ids as numbers, dates as YYYY-MM-DD, defaults for what is left out', async () => {
    const res = await execute('WizardProbe', 'action_echo', {
      ids: [ids.probe],
      request_body: { inputs: {
        partner: { id: ids.alice }, contacts: [ids.bob, { id: ids.alice }, ids.bob], when: '2026-05-04', at: '2026-05-04T10:30:00+02:00',
        amount: '12.50', ratio: 0.26, flag: true, note: 42, unknown_key: 'ignored',
      } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toEqual({ inputs: {
      partner: ids.alice, contacts: [ids.bob, ids.alice], when: '2026-05-04', at: '2026-05-04T08:30:00.000Z',
      amount: 12.5, ratio: 0.3, kind: 'a', flag: true, count: 3, note: '42',
    } });
    // A hidden contact in a ManyToMany is refused too; a model-level wizard is checked the same way.
    const hidden = await execute('WizardProbe', 'action_echo', { ids: [ids.probe], request_body: { inputs: { partner: ids.alice, contacts: [ids.bob, ids.hidden] } } });
    expect(hidden.json()).toMatchObject({ error: 'ValidationError', detail: `Field 'contacts': Contact ${ids.hidden} does not exist` });
    const model = await execute('WizardProbe', 'echo_model', { request_body: { inputs: { when: 'soon' } } });
    expect(model.statusCode).toBe(400);
    expect(model.json().detail).toMatch(/field 'when' of WizardProbe\.echo_model/);
    expect((await execute('WizardProbe', 'echo_model', { request_body: { inputs: { when: '2026-01-02' } } })).json().result).toEqual({ inputs: { when: '2026-01-02' } });
    // A method without wizard still receives its inputs as sent.
    const plain = await execute('WizardProbe', 'action_plain', { ids: [ids.probe], request_body: { inputs: { anything: [1, 'two'] } } });
    expect(plain.json().result).toEqual({ inputs: { anything: [1, 'two'] } });
  });
});
