/**
 * `writeEach`: a write giving each record its own values in one UPDATE (`update-rows.ts`) keeps
 * what a write of one set of values guarantees, per record: Monetary amounts rounded to the
 * currency the row writes or else holds, `_check_change` seeing every distinct set of values (with
 * the records taking it), editable computed values kept where written and recomputed elsewhere,
 * a record given two sets of values refused, one that does not exist a 404.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Currency } from '../../modules/core/models/currency.js';
import { NotFound, UserError, ValidationError } from '../../src/errors.js';
import { currentEnv } from '../../src/orm/env.js';
import type { Model } from '../../src/orm/model.js';
import { modelOf } from '../../src/orm/model-lookup.js';
import { writeEach } from '../../src/orm/write/write-records.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE_MODELS = `
import { Model, UserError, fields } from 'fieldforge';
import type { ModelChange } from 'fieldforge';

/** Every change the model is asked to accept, for the test to read. */
export const seen: { ids: number[]; vals: Record<string, unknown> }[] = [];

export class EachProbe extends Model {
  static override _order_by = ['id ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    currency: fields.ManyToOne('Currency'),
    amount: fields.Monetary({ currency_field: 'currency' }),
    base: fields.Integer({ default: 1 }),
    label: fields.Char({ calculate: 'calc_label', store: true, editable: true, depends: ['base'] }),
  };
  declare base: number;
  calc_label(): string { return 'base ' + this.base; }

  static override _check_change(change: ModelChange): void {
    if (change.op !== 'write') return;
    seen.push({ ids: [...change.ids], vals: { ...change.vals } });
    if (change.vals.name === 'forbidden') throw new UserError('That name is forbidden');
  }
}
`;

let t: TestDatabase;
let root: string;
const currency: Record<string, number> = {};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ff-write-each-'));
  await writeProbeModule(root, 'each_probe', { 'models/index.ts': PROBE_MODELS, 'security/access.yaml': adminAccessYaml(['EachProbe']) });
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['each_probe'] });
  await t.run(async () => {
    for (const code of ['USD', 'JPY', 'BHD']) currency[code] = (await Currency.query({ name: code }).with_archived().first())!.id;
  });
});
afterAll(async () => {
  await t?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const Probe = () => modelOf<typeof Model>('EachProbe');
const seen = async () => ((await import(join(root, 'each_probe', 'models', 'index.ts'))) as { seen: unknown[] }).seen;

async function probes(rows: Record<string, unknown>[]): Promise<number[]> {
  return t.run(async () => (await Probe().create_many(rows)).map((r) => r.id));
}
async function read(ids: number[], fields: string[]): Promise<Record<string, unknown>[]> {
  return t.run(() => Probe().query({ id__in: ids }).order_by('id ASC').read(fields));
}
const write = (entries: { id: number; vals: Record<string, unknown> }[]) => t.run(() => writeEach(currentEnv().registry.meta('EachProbe'), entries));

describe('writeEach', () => {
  it('rounds each Monetary amount to the currency its row writes, or else holds', async () => {
    const ids = await probes([
      { name: 'usd', currency: currency.USD, amount: 1 },
      { name: 'jpy', currency: currency.JPY, amount: 1 },
      { name: 'to jpy', currency: currency.USD, amount: 1 },
      { name: 'none', amount: 1 },
    ]);
    await write([
      { id: ids[0]!, vals: { amount: 2.345 } },
      { id: ids[1]!, vals: { amount: 2.5 } },
      { id: ids[2]!, vals: { amount: 7.4, currency: currency.JPY } },
      { id: ids[3]!, vals: { amount: 2.345 } },
    ]);
    expect((await read(ids, ['amount'])).map((r) => r.amount)).toEqual([2.35, 3, 7, 2.345]);
    // A row writing only a currency keeps its amount (as a write of one set of values does).
    await write([{ id: ids[0]!, vals: { currency: currency.BHD } }, { id: ids[1]!, vals: { amount: 0.5 } }]);
    expect((await read(ids, ['amount'])).map((r) => r.amount).slice(0, 2)).toEqual([2.35, 1]);
  });

  it('calls _check_change once per distinct set of values, with the records taking it; its refusal writes nothing', async () => {
    const ids = await probes([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    const log = await seen();
    log.length = 0;
    await write([{ id: ids[0]!, vals: { base: 2, name: 'x' } }, { id: ids[1]!, vals: { base: 3 } }, { id: ids[2]!, vals: { name: 'x', base: 2 } }]);
    expect(log).toEqual([{ ids: [ids[0], ids[2]], vals: { base: 2, name: 'x' } }, { ids: [ids[1]], vals: { base: 3 } }]);
    const err = await t.failure(() => writeEach(currentEnv().registry.meta('EachProbe'), [{ id: ids[0]!, vals: { base: 9 } }, { id: ids[1]!, vals: { name: 'forbidden' } }]));
    expect(err).toBeInstanceOf(UserError);
    expect((await read(ids, ['base'])).map((r) => r.base)).toEqual([2, 3, 2]);
  });

  it('keeps an editable computed value where it is written and recomputes it on the others', async () => {
    const ids = await probes([{ name: 'p' }, { name: 'q' }]);
    await write([{ id: ids[0]!, vals: { base: 5, label: 'typed' } }, { id: ids[1]!, vals: { base: 6 } }]);
    expect((await read(ids, ['label'])).map((r) => r.label)).toEqual(['typed', 'base 6']);
  });

  it('refuses a record given two sets of values, and a record that does not exist (nothing written)', async () => {
    const ids = await probes([{ name: 'once' }]);
    const twice = await t.failure(() => writeEach(currentEnv().registry.meta('EachProbe'), [{ id: ids[0]!, vals: { base: 1 } }, { id: ids[0]!, vals: { base: 2 } }]));
    expect(twice).toBeInstanceOf(ValidationError);
    expect(twice.message).toMatch(/written twice/);
    const missing = await t.failure(() => writeEach(currentEnv().registry.meta('EachProbe'), [{ id: ids[0]!, vals: { name: 'gone?' } }, { id: 99999999, vals: { base: 2 } }]));
    expect(missing).toBeInstanceOf(NotFound);
    expect((await read(ids, ['name']))[0]!.name).toBe('once');
  });
});
