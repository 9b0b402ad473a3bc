/**
 * Execute on a selection (spec §4.6, CONTRACTS C1) and the actions a method returns: the method
 * runs once per record the selection resolves to, in the selection's order, with
 * `context.active_ids`/`active_model`; `result` is then always an array in that order. The
 * selection resolves as a query would for the caller (rules, archiving); explicit ids the caller
 * cannot see are a 404 for the whole call, before anything runs. A result carrying `close` /
 * `reload` sets `X-Action-Close: 1` / `X-Action-Reload: 1`, each absent otherwise.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import type { Model } from '../../src/orm/model.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const MODELS = `
import { Model, fields } from 'fieldforge';

export class SelProbe extends Model {
  static override _order_by = ['sequence ASC', 'id ASC'];
  static override _api_methods = ['action_touch', 'action_dialog', 'action_plain', 'count_all'];
  static override fields = {
    name: fields.Char({ required: true }),
    sequence: fields.Integer({ default: 10 }),
    touched: fields.Integer({ default: 0 }),
    secret: fields.Boolean({ default: false }),
    active: fields.Boolean({ default: true }),
  };
  declare name: string;
  declare touched: number;

  async action_touch(_inputs: unknown, context: Record<string, unknown>) {
    await this.write({ touched: this.touched + 1 });
    return { id: this.id, active_ids: context.active_ids, active_model: context.active_model };
  }
  action_dialog(inputs: { close?: boolean; reload?: boolean }) {
    return { done: this.id, close: inputs.close === true, reload: inputs.reload === true };
  }
  action_plain(): string { return this.name; }
  static async count_all() { return this.query().count(); }
}
`;

const SECURITY = `${adminAccessYaml(['SelProbe'])}
- data_type: Group
  identifier: group_restricted
  name: Probe restricted users
- data_type: ModelAccess
  identifier: access_selprobe_user
  name: SelProbe / restricted users
  model: SelProbe
  group: group_restricted
  read_perm: true
  write_perm: true
- data_type: RecordRule
  identifier: rule_selprobe_no_secret
  name: users do not see secret probes
  model: SelProbe
  filter: Q(secret=False)
  groups: [group_restricted]
`;

let t: TestDatabase;
let root: string;
let userKey: string;
const ids: Record<string, number> = {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-exec-sel-'));
  await writeProbeModule(root, 'sel_probe', { 'models/index.ts': MODELS, 'security/access.yaml': SECURITY });
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['sel_probe'] });
  ({ key: userKey } = await t.run(() => createServiceAccountKey({ name: 'restricted user', groups: ['core.group_user', 'sel_probe.group_restricted'] })));
  await t.run(async () => {
    const Probe = modelOf<typeof Model>('SelProbe');
    const make = async (name: string, vals: Record<string, unknown> = {}) => (ids[name] = (await Probe.create({ name, ...vals })).id);
    await make('S-third', { sequence: 30 });
    await make('S-first', { sequence: 1 });
    await make('S-second', { sequence: 2 });
    await make('S-archived', { sequence: 3, active: false });
    await make('S-secret', { sequence: 4, secret: true });
    await make('Other', { sequence: 5 });
  });
});
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

type Call = { ids?: number[]; selection?: unknown; request_body?: unknown };
const execute = (method: string, body: Call, key?: string) =>
  t.api('POST', `/api/execute/SelProbe/${method}`, body, key ? { authorization: `Bearer ${key}` } : {});
const touched = () => t.run(async () => Object.fromEntries(
  (await modelOf<typeof Model>('SelProbe').query().with_archived().read(['name', 'touched'])).map((r) => [r.name, r.touched])));

describe('a selection instead of ids', () => {
  it('runs once per matched record in the model\'s default order, active_ids in that order, result an array', async () => {
    const res = await execute('action_touch', { selection: { filter_str: "Q(name__startswith='S-')" } });
    expect(res.statusCode, res.body).toBe(200);
    const order = [ids['S-first'], ids['S-second'], ids['S-secret'], ids['S-third']];
    expect(res.json().result).toEqual(order.map((id) => ({ id, active_ids: order, active_model: 'SelProbe' })));
    // The archived record is not matched by a filter that does not name `active`.
    expect((await touched())['S-archived']).toBe(0);
  });

  it('explicit ids run in the order sent (duplicates once) and reach archived records', async () => {
    const sent = [ids['S-third']!, ids['S-archived']!, ids['S-third']!, ids['S-first']!];
    const res = await execute('action_plain', { selection: { ids: sent } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toEqual(['S-third', 'S-archived', 'S-first']);
  });

  it('filter_str "" is every visible record; exclude_ids takes some out; name_search matches names', async () => {
    const all = (await execute('action_plain', { selection: { filter_str: '' } })).json().result;
    expect(all).toEqual(['S-first', 'S-second', 'S-secret', 'Other', 'S-third']);
    const some = (await execute('action_plain', { selection: { filter_str: '', exclude_ids: [ids['Other'], ids['S-second']] } })).json().result;
    expect(some).toEqual(['S-first', 'S-secret', 'S-third']);
    const named = (await execute('action_plain', { selection: { name_search: ['third'] } })).json().result;
    expect(named).toEqual(['S-third']);
  });

  it('a selection matching one record still answers an array, and none answers []', async () => {
    expect((await execute('action_plain', { selection: { ids: [ids['Other']] } })).json().result).toEqual(['Other']);
    expect((await execute('action_plain', { selection: { filter_str: "Q(name='nobody')" } })).json().result).toEqual([]);
    // With plain ids a single record still answers its value (ARCHITECTURE §9).
    expect((await execute('action_plain', { ids: [ids['Other']!] })).json().result).toBe('Other');
  });

  it('bad selections are 400s and run nothing', async () => {
    const before = await touched();
    const cases: [unknown, RegExp][] = [
      [{}, /names no records/],
      [{ exclude_ids: [ids['Other']] }, /names no records/],
      [{ name_search: [] }, /names no records/],
      [{ ids: [ids['Other']], filter_str: '' }, /ids or a filter/],
      [{ filter: "Q(name='x')" }, /unknown key 'filter'/],
      [{ ids: ['1'] }, /array of record ids/],
      ['all', /must be an object/],
    ];
    for (const [selection, detail] of cases) {
      const res = await execute('action_touch', { selection });
      expect(res.statusCode, JSON.stringify(selection)).toBe(400);
      expect(res.json().error).toBe('BadRequest');
      expect(res.json().detail).toMatch(detail);
    }
    const both = await execute('action_touch', { ids: [ids['Other']!], selection: { ids: [ids['Other']] } });
    expect(both.statusCode).toBe(400);
    expect(both.json().detail).toMatch(/'ids' or 'selection', not both/);
    expect(await touched()).toEqual(before);
  });

  it('a model-level method refuses a selection, a record method needs one (or ids)', async () => {
    expect((await execute('count_all', { selection: { filter_str: '' } })).statusCode).toBe(400);
    expect((await execute('action_plain', {})).statusCode).toBe(400);
    expect((await execute('count_all', {})).json().result).toBe(5);
  });
});

describe('the caller\'s access decides what a selection holds', () => {
  it('a record rule hides records from a filter; a hidden explicit id is a 404 for the whole call, nothing run', async () => {
    const filtered = await execute('action_plain', { selection: { filter_str: "Q(name__startswith='S-')" } }, userKey);
    expect(filtered.statusCode, filtered.body).toBe(200);
    expect(filtered.json().result).toEqual(['S-first', 'S-second', 'S-third']);
    const before = await touched();
    const hidden = await execute('action_touch', { selection: { ids: [ids['S-first'], ids['S-secret']] } }, userKey);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toMatchObject({ detail: `SelProbe ${ids['S-secret']} does not exist`, error: 'NotFound' });
    const missing = await execute('action_touch', { selection: { ids: [ids['S-first'], 999_999] } }, userKey);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().detail).toBe('SelProbe 999999 does not exist');
    const plainIds = await execute('action_touch', { ids: [ids['S-first']!, ids['S-secret']!] }, userKey);
    expect(plainIds.statusCode).toBe(404);
    expect(await touched()).toEqual(before);
  });
});

describe('actions a method returns', () => {
  it('close and reload set X-Action-Close / X-Action-Reload, each absent unless a result asks for it', async () => {
    const both = await execute('action_dialog', { ids: [ids['Other']!], request_body: { inputs: { close: true, reload: true } } });
    expect(both.statusCode, both.body).toBe(200);
    expect(both.headers['x-action-close']).toBe('1');
    expect(both.headers['x-action-reload']).toBe('1');
    const closeOnly = await execute('action_dialog', { selection: { filter_str: "Q(name__startswith='S-')" }, request_body: { inputs: { close: true } } });
    expect(closeOnly.headers['x-action-close']).toBe('1');
    expect(closeOnly.headers['x-action-reload']).toBeUndefined();
    const neither = await execute('action_dialog', { ids: [ids['Other']!], request_body: { inputs: {} } });
    expect(neither.headers['x-action-close']).toBeUndefined();
    expect(neither.headers['x-action-reload']).toBeUndefined();
    expect(neither.json().result).toEqual({ done: ids['Other'], close: false, reload: false });
    const plain = await execute('action_plain', { ids: [ids['Other']!] });
    expect(plain.headers['x-action-close']).toBeUndefined();
  });
});
