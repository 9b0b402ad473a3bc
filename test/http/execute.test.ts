/**
 * POST /api/execute/{model}/{method} (spec §4.6, ARCHITECTURE §9): only `_api_methods` are
 * callable, once per record, result a single value or an array; a UserError is a 400 and rolls
 * the whole request back; an unexpected error is a 500 that leaks nothing outside dev mode.
 * A small module written at start-up adds methods that write before failing.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { ProjectStage } from '../../modules/project/models/project_stage.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODEL = `
import { Model, UserError, fields } from 'fieldforge';

export class ExecProbe extends Model {
  static override _api_methods = ['action_bump', 'action_fail', 'action_echo', 'action_crash', 'hello'];
  static override fields = {
    name: fields.Char({ required: true }),
    amount: fields.Integer({ default: 0 }),
  };
  declare name: string;
  declare amount: number;
  async action_bump(inputs: { by?: number }): Promise<number> {
    await this.write({ amount: this.amount + (inputs.by ?? 1) });
    return this.amount;
  }
  /** Writes, then refuses for records named 'bad…': none of the request's writes may survive. */
  async action_fail(): Promise<number> {
    await this.write({ amount: 999 });
    if (this.name.startsWith('bad')) throw new UserError('Probe refused: amount may not be 999');
    return this.amount;
  }
  async action_echo(inputs: Record<string, unknown>, context: Record<string, unknown>) {
    return { id: this.id, inputs, active_ids: context.active_ids, active_model: context.active_model, lang: context.lang ?? null };
  }
  async action_crash(): Promise<never> {
    await this.write({ amount: 1234 });
    throw new Error('kaboom: internal secret /srv/app/config.ts line 42');
  }
  async _secret(): Promise<string> { return 'secret'; }
  async not_listed(): Promise<string> { return 'not listed'; }
  static async hello(inputs: { who?: string }, context: Record<string, unknown>) {
    return { hello: inputs.who ?? 'world', active_model: context.active_model };
  }
}
`;

let t: TestDatabase;
let probeRoot: string;
let prodApp: FastifyInstance;
let doneStage: number;
let reviewStage: number;

beforeAll(async () => {
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-exec-probe-'));
  await writeProbeModule(probeRoot, 'exec_probe', { 'models/index.ts': PROBE_MODEL, 'security/access.yaml': adminAccessYaml(['ExecProbe']) });
  t = await testDatabase('full', [probeRoot]);
  await t.platform.install(t.name, { init: ['exec_probe'] });
  prodApp = await buildApp(t.platform, { dev: false });
  await t.run(async () => {
    doneStage = (await ProjectStage.query({ name: 'Done' }).first())!.id;
    reviewStage = (await ProjectStage.query({ name: 'Review' }).first())!.id;
  });
});
afterAll(async () => {
  await prodApp?.close();
  await t?.close();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

async function newTask(name: string): Promise<number> {
  const res = await t.api('POST', '/api/create/ProjectTask', { name, stage: reviewStage });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}
async function newProbe(name: string, amount = 0): Promise<number> {
  const res = await t.api('POST', '/api/create/ExecProbe', { name, amount });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}
async function amountOf(id: number): Promise<number> {
  return (await t.api('POST', `/api/fetch/ExecProbe/${id}`, { fields: ['amount'] })).json().amount;
}
async function stageOf(id: number): Promise<number | null> {
  return (await t.api('POST', `/api/fetch/ProjectTask/${id}`, { fields: ['stage'] })).json().stage?.id ?? null;
}

describe('execute', () => {
  it('ProjectTask.action_close on one id: {message, result} with the single return value', async () => {
    const id = await newTask('Close me');
    const res = await t.api('POST', '/api/execute/ProjectTask/action_close', { ids: [id] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message: expect.any(String), result: { stage: doneStage } });
    expect(Object.keys(res.json()).sort()).toEqual(['message', 'result']);
    expect(await stageOf(id)).toBe(doneStage);
  });

  it('on several ids: result is an array in the order of the ids sent', async () => {
    const a = await newTask('Close A');
    const b = await newTask('Close B');
    const res = await t.api('POST', '/api/execute/ProjectTask/action_close', { ids: [b, a], request_body: { inputs: {}, context: {} } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message: expect.any(String), result: [{ stage: doneStage }, { stage: doneStage }] });
    expect([await stageOf(a), await stageOf(b)]).toEqual([doneStage, doneStage]);

    const p1 = await newProbe('order 1', 10);
    const p2 = await newProbe('order 2', 20);
    const bumped = await t.api('POST', '/api/execute/ExecProbe/action_bump', { ids: [p2, p1], request_body: { inputs: { by: 5 } } });
    expect(bumped.json().result).toEqual([25, 15]);
  });

  it('passes inputs and context, with the ids in context.active_ids', async () => {
    const p1 = await newProbe('echo 1');
    const p2 = await newProbe('echo 2');
    const res = await t.api('POST', '/api/execute/ExecProbe/action_echo', {
      ids: [p1, p2], request_body: { inputs: { note: 'hi' }, context: { lang: 'fr' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toEqual([
      { id: p1, inputs: { note: 'hi' }, active_ids: [p1, p2], active_model: 'ExecProbe', lang: 'fr' },
      { id: p2, inputs: { note: 'hi' }, active_ids: [p1, p2], active_model: 'ExecProbe', lang: 'fr' },
    ]);
  });

  it('calls a listed static method once when no ids are given', async () => {
    const res = await t.api('POST', '/api/execute/ExecProbe/hello', { request_body: { inputs: { who: 'tester' } } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message: expect.any(String), result: { hello: 'tester', active_model: 'ExecProbe' } });
  });

  it('answers 404 for a method not in _api_methods, private or inherited', async () => {
    const id = await newTask('Untouchable');
    const probe = await newProbe('untouchable', 3);
    const cases: [string, string][] = [
      ['ProjectTask', 'write'], ['ProjectTask', 'unlink'], ['ProjectTask', 'calc_subtask_count'], ['ProjectTask', 'toJSON'],
      ['ProjectTask', 'constructor'], ['ProjectTask', '__proto__'], ['ProjectTask', 'no_such_method'],
      ['ExecProbe', 'not_listed'], ['ExecProbe', '_secret'],
    ];
    for (const [model, method] of cases) {
      const res = await t.api('POST', `/api/execute/${model}/${method}`, { ids: [model === 'ProjectTask' ? id : probe], request_body: { inputs: { name: 'hacked' } } });
      expect(res.statusCode, `${model}.${method}: ${res.body}`).toBe(404);
      expect(res.json()).toMatchObject({ detail: `${model} has no API method '${method}'`, error: 'NotFound' });
    }
    expect((await t.api('POST', `/api/fetch/ProjectTask/${id}`, { fields: ['name'] })).json().name).toBe('Untouchable');
  });

  it('runs once per record when an id is sent twice', async () => {
    const probe = await newProbe('twice', 0);
    const res = await t.api('POST', '/api/execute/ExecProbe/action_echo', { ids: [probe, probe] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().result).toEqual({ id: probe, inputs: {}, active_ids: [probe], active_model: 'ExecProbe', lang: null });
    const bumped = await t.api('POST', '/api/execute/ExecProbe/action_bump', { ids: [probe, probe] });
    expect(bumped.json().result).toBe(1);
    expect(await amountOf(probe)).toBe(1);
  });

  it('answers 404 when a record does not exist, and runs the method on none of them', async () => {
    const probe = await newProbe('partial', 1);
    const res = await t.api('POST', '/api/execute/ExecProbe/action_bump', { ids: [probe, 999999] });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'NotFound' });
    expect(await amountOf(probe)).toBe(1);
  });

  it('refuses malformed ids', async () => {
    const res = await t.api('POST', '/api/execute/ExecProbe/action_bump', { ids: ['1'] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ detail: "'ids' must be an array of record ids", error: 'BadRequest' });
  });

  it('a UserError from the method is a 400 UserError and nothing is written', async () => {
    const failing = await newProbe('bad one', 8);
    const fail = await t.api('POST', '/api/execute/ExecProbe/action_fail', { ids: [failing] });
    expect(fail.statusCode).toBe(400);
    expect(fail.json()).toMatchObject({ detail: 'Probe refused: amount may not be 999', error: 'UserError' });
    expect(await amountOf(failing)).toBe(8);
  });

  it('a UserError on a later record rolls back the writes to the earlier ones', async () => {
    const good = await newProbe('good', 1);
    const bad = await newProbe('bad two', 2);
    const fail = await t.api('POST', '/api/execute/ExecProbe/action_fail', { ids: [good, bad] });
    expect(fail.statusCode).toBe(400);
    expect(fail.json()).toMatchObject({ error: 'UserError' });
    expect([await amountOf(good), await amountOf(bad)]).toEqual([1, 2]);
    // The same method on the good record alone succeeds (so the rollback above was real).
    const ok = await t.api('POST', '/api/execute/ExecProbe/action_fail', { ids: [good] });
    expect(ok.json().result).toBe(999);
    expect(await amountOf(good)).toBe(999);
  });

  it('a UserError from ProjectTask.action_close is a 400 and no task moves', async () => {
    // action_close refuses when no stage is marked closed.
    const a = await newTask('Rollback A');
    const b = await newTask('Rollback B');
    const closed = await t.run(() => ProjectStage.query('Q(is_closed=True)').ids());
    await t.run(() => ProjectStage.query(`Q(id__in=[${closed.join(', ')}])`).update({ is_closed: false }));
    try {
      const res = await t.api('POST', '/api/execute/ProjectTask/action_close', { ids: [a, b] });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        detail: 'Cannot close the task: no stage is marked as closed. Mark one as closed in Project > Configuration > Stages.',
        error: 'UserError',
      });
    } finally {
      await t.run(() => ProjectStage.query(`Q(id__in=[${closed.join(', ')}])`).update({ is_closed: true }));
    }
    expect([await stageOf(a), await stageOf(b)]).toEqual([reviewStage, reviewStage]);
    const tasks = await t.run(() => ProjectTask.query(`Q(id__in=[${a}, ${b}])`).ids());
    expect(tasks).toHaveLength(2);
  });

  it('an unexpected error is a 500 that leaks nothing without dev mode, and rolls back', async () => {
    const id = await newProbe('crash', 5);
    const res = await prodApp.inject({
      method: 'POST', url: '/api/execute/ExecProbe/action_crash',
      headers: { authorization: `Bearer ${t.apiKey}`, 'x-db-name': t.name, 'content-type': 'application/json' },
      payload: JSON.stringify({ ids: [id] }),
    });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ detail: 'Internal server error', error: 'InternalError' });
    expect(res.body).not.toContain('kaboom');
    expect(res.body).not.toContain('/srv/app');
    expect(res.body).not.toContain('.ts');
    expect(await amountOf(id)).toBe(5);
    // In dev mode (the harness's app) the traceback is there.
    const dev = await t.api('POST', '/api/execute/ExecProbe/action_crash', { ids: [id] });
    expect(dev.statusCode).toBe(500);
    expect(dev.json()).toMatchObject({ detail: 'Internal server error', error: 'InternalError', traceback: expect.stringContaining('kaboom') });
  });

  it('an unknown model is a 404', async () => {
    const res = await t.api('POST', '/api/execute/NoSuchModel/action_close', { ids: [1] });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ detail: "Model 'NoSuchModel' does not exist", error: 'NotFound' });
  });
});
