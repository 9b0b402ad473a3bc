/**
 * Currencies and rates (spec §2.3): the generated ISO 4217 seed, activation through a company's
 * base currency or directly, pickers listing only active currencies, `get_rate` / `convert`, the
 * unique rate per day, the stored `inverse_rate`, Monetary amounts without float drift, the
 * `visible_setting` gate in the registry, and `db create --currency`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { currencies as isoCurrencies } from 'countries-list/currencies';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Company } from '../../modules/core/models/company.js';
import { Currency, CurrencyRate } from '../../modules/core/models/currency.js';
import { Settings } from '../../modules/core/models/settings.js';
import { BadRequest, UserError } from '../../src/errors.js';
import { currentEnv } from '../../src/orm/env.js';
import { createDatabase } from '../../src/platform/database-lifecycle.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { rows, type Rec } from '../support/orm.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const GATE = 'Q(enable_multi_currency=True)';
const PROBE_MODEL = `
import { Model, fields } from 'fieldforge';

export class MoneyProbe extends Model {
  static override fields = {
    name: fields.Char({ required: true }),
    currency: fields.ManyToOne('Currency'),
    amount: fields.Monetary({ currency_field: 'currency' }),
    foreign_amount: fields.Monetary({ currency_field: 'currency', visible_setting: '${GATE}' }),
  };
}
`;
/** The codes the seed must hold: ISO 4217 as the package maintains it, withdrawn codes left out. */
const ISO_CODES = Object.entries(isoCurrencies).filter(([, c]) => !c.withdrawn).map(([code]) => code).sort();

let t: TestDatabase;
let probeRoot: string;
const ids = {} as Record<'company' | 'settings' | 'USD' | 'EUR' | 'JPY' | 'GBP' | 'CHF' | 'CAD' | 'SEK' | 'NOK', number>;

beforeAll(async () => {
  probeRoot = await mkdtemp(join(tmpdir(), 'ff-money-probe-'));
  await writeProbeModule(probeRoot, 'money_probe', { 'models/index.ts': PROBE_MODEL, 'security/access.yaml': adminAccessYaml(['MoneyProbe']) });
  t = await testDatabase('core', [probeRoot]);
  await t.platform.install(t.name, { init: ['money_probe'] });
  await t.run(async () => {
    for (const code of ['USD', 'EUR', 'JPY', 'GBP', 'CHF', 'CAD', 'SEK', 'NOK'] as const) {
      ids[code] = (await Currency.query({ name: code }).with_archived().first())!.id;
    }
    ids.company = (await Company.query().order_by('id ASC').first())!.id;
    ids.settings = (await Settings.query({ company: ids.company }).first())!.id;
  });
});
afterAll(async () => {
  await t?.close();
  if (probeRoot) await rm(probeRoot, { recursive: true, force: true });
});

async function ok(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
  const res = await t.api(method, url, body);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const activeCodes = () => t.run(async () => (await Currency.query().all()).map((c) => c.name).sort());

describe('the ISO 4217 seed', () => {
  it('holds every current ISO 4217 code, and every ICU currency that ISO 4217 still lists', async () => {
    const seeded = await t.run(() => Currency.query().with_archived().read(['name', 'identifier']));
    expect(seeded.map((c) => c.name).sort()).toEqual(ISO_CODES);
    expect(seeded.every((c) => c.identifier === `core.currency_${String(c.name).toLowerCase()}`)).toBe(true);
    const icuCurrent = Intl.supportedValuesOf('currency').filter((code) => ISO_CODES.includes(code));
    expect(icuCurrent.length).toBeGreaterThan(150);
    expect(seeded.map((c) => c.name)).toEqual(expect.arrayContaining(icuCurrent));
  });

  it('derives rounding from the minor units, symbols, plurals and positions from ICU', async () => {
    const byCode = await t.run(async () => new Map((await Currency.query().with_archived().all() as Rec[]).map((c) => [c.name, c])));
    expect(byCode.get('USD')).toMatchObject({ rounding: 0.01, symbol: '$', plural: 'US dollars', position: 'Before' });
    expect(byCode.get('EUR')).toMatchObject({ rounding: 0.01, symbol: '€', plural: 'euros', position: 'After' });
    expect(byCode.get('JPY')).toMatchObject({ rounding: 1, symbol: '¥', plural: 'Japanese yen', position: 'Before' });
    expect(byCode.get('KWD')).toMatchObject({ rounding: 0.001 });
    expect(byCode.get('CLF')).toMatchObject({ rounding: 0.0001 });
    // ISO gives metals no minor unit: not rounded to whole ounces.
    expect(byCode.get('XAU')).toMatchObject({ rounding: 0.01 });
    for (const c of byCode.values()) {
      expect(c.symbol, c.name).toBeTruthy();
      expect(c.plural, c.name).toBeTruthy();
    }
  });

  it('is inactive except the first company’s currency (USD by default)', async () => {
    expect(await activeCodes()).toEqual(['USD']);
    const company = await ok('POST', `/api/fetch/Company/${ids.company}`, { fields: ['currency'] });
    expect(company.currency).toEqual({ id: ids.USD, display_name: 'USD' });
  });
});

describe('activation and pickers', () => {
  it('name_search and queries list only active currencies', async () => {
    expect(await ok('POST', '/api/name_search/Currency', { term: 'dollar' })).toEqual([{ id: ids.USD, display_name: 'USD' }]);
    expect((await ok('POST', '/api/query/Currency', { fields: ['name'] })).map((c: Rec) => c.name)).toEqual(['USD']);
    // Switched on directly: the picker offers it from then on.
    await ok('PUT', `/api/update/Currency/${ids.CAD}`, { active: true });
    expect(await ok('POST', '/api/name_search/Currency', { term: 'dollar' })).toEqual([
      { id: ids.CAD, display_name: 'CAD' },
      { id: ids.USD, display_name: 'USD' },
    ]);
    await ok('PUT', `/api/update/Currency/${ids.CAD}`, { active: false });
    expect(await ok('POST', '/api/name_search/Currency', { term: 'CAD' })).toEqual([]);
  });

  it("setting a company's currency activates it (API create and update, model code)", async () => {
    const created = await ok('POST', '/api/create/Company', { name: 'Euro branch', currency: ids.EUR });
    expect(await activeCodes()).toContain('EUR');
    await ok('PUT', `/api/update/Company/${created.id}`, { currency: ids.GBP });
    expect(await activeCodes()).toEqual(expect.arrayContaining(['EUR', 'GBP']));
    await t.run(async () => {
      const other = await Company.create({ name: 'Swiss branch' });
      expect((await Currency.get(ids.CHF)).active).toBe(false);
      await other.write({ currency: ids.CHF });
      expect((await Currency.get(ids.CHF)).active).toBe(true);
    });
    // A company whose currency is something else activates nothing more.
    await ok('POST', '/api/create/Company', { name: 'No currency' });
    expect(await activeCodes()).toEqual(['CHF', 'EUR', 'GBP', 'USD']);
  });

  it('a core upgrade reloads the seed without switching anything off', async () => {
    await t.run(() => Currency.query({ name: 'USD' }).update({ symbol: 'US$' }));
    await t.platform.install(t.name, { update: ['core'] });
    expect(await activeCodes()).toEqual(['CHF', 'EUR', 'GBP', 'USD']);
    expect(await t.run(async () => (await Currency.get(ids.USD)).symbol)).toBe('$');
  });
});

describe('CurrencyRate', () => {
  let rateCompany: number;
  beforeAll(async () => {
    // A company of its own (USD), so the rates here meet no other test's.
    rateCompany = (await ok('POST', '/api/create/Company', { name: 'Rates Inc', currency: ids.USD })).id;
    await t.run(() => CurrencyRate.create_many([
      { currency: ids.EUR, company: rateCompany, date: '2024-01-01', rate: 1.1 },
      { currency: ids.EUR, company: rateCompany, date: '2024-03-01', rate: 1.2 },
      { currency: ids.JPY, company: rateCompany, date: '2024-01-01', rate: 0.0067 },
      { currency: ids.SEK, company: rateCompany, date: '2024-01-01', rate: 0 },
      // A rate for the company's own currency is ignored: its rate is 1.0 by definition.
      { currency: ids.USD, company: rateCompany, date: '2024-01-01', rate: 5 },
      // Another company's rate never leaks into this one's.
      { currency: ids.GBP, company: ids.company, date: '2024-01-01', rate: 1.3 },
    ]));
  });

  it('get_rate gives the most recent rate on or before the date, today by default', async () => {
    await t.run(async () => {
      expect(await CurrencyRate.get_rate(ids.EUR, rateCompany, '2024-01-01')).toBe(1.1);
      expect(await CurrencyRate.get_rate(ids.EUR, rateCompany, '2024-02-29')).toBe(1.1);
      expect(await CurrencyRate.get_rate(ids.EUR, rateCompany, '2024-03-01')).toBe(1.2);
      expect(await CurrencyRate.get_rate(ids.EUR, rateCompany, new Date('2030-06-01T12:00:00Z'))).toBe(1.2);
      expect(await CurrencyRate.get_rate(ids.EUR, rateCompany)).toBe(1.2);
    });
  });

  it("get_rate is 1.0 for the company's own currency and when no rate exists", async () => {
    await t.run(async () => {
      expect(await CurrencyRate.get_rate(ids.USD, rateCompany, '2024-06-01')).toBe(1.0);
      expect(await CurrencyRate.get_rate(ids.EUR, rateCompany, '2023-12-31')).toBe(1.0);
      expect(await CurrencyRate.get_rate(ids.GBP, rateCompany, '2024-06-01')).toBe(1.0);
      expect(await CurrencyRate.get_rate(ids.GBP, ids.company, '2024-06-01')).toBe(1.3);
    });
  });

  it('a rate for a future day is not used before it', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    await t.run(async () => {
      await CurrencyRate.create({ currency: ids.NOK, company: rateCompany, date: tomorrow, rate: 0.09 });
      expect(await CurrencyRate.get_rate(ids.NOK, rateCompany)).toBe(1.0);
      expect(await CurrencyRate.get_rate(ids.NOK, rateCompany, tomorrow)).toBe(0.09);
    });
  });

  it('convert: amount × from rate ÷ to rate, unchanged for equal currencies', async () => {
    await t.run(async () => {
      // 100 EUR = 110 USD = 16,417.91 JPY on 2024-02-01 (1 EUR = 1.1 USD, 1 JPY = 0.0067 USD).
      expect(await CurrencyRate.convert(100, ids.EUR, ids.USD, rateCompany, '2024-02-01')).toBeCloseTo(110, 10);
      expect(await CurrencyRate.convert(100, ids.EUR, ids.JPY, rateCompany, '2024-02-01')).toBeCloseTo(110 / 0.0067, 8);
      expect(await CurrencyRate.convert(110, ids.USD, ids.EUR, rateCompany, '2024-02-01')).toBeCloseTo(100, 10);
      // Later rate, later answer.
      expect(await CurrencyRate.convert(100, ids.EUR, ids.USD, rateCompany, '2024-03-15')).toBeCloseTo(120, 10);
      // Equal currencies: exactly the amount, whatever rates exist.
      expect(await CurrencyRate.convert(0.1, ids.EUR, ids.EUR, rateCompany, '2024-02-01')).toBe(0.1);
      // Not rounded: the caller rounds with the target currency when it needs to.
      const yen = await CurrencyRate.convert(100, ids.EUR, ids.JPY, rateCompany, '2024-02-01');
      expect((await Currency.get(ids.JPY)).round(yen)).toBe(16418);
      expect((await Currency.get(ids.EUR)).round(2.675)).toBe(2.68);
    });
  });

  it('convert raises UserError on a zero target rate', async () => {
    const err = await t.failure(() => CurrencyRate.convert(100, ids.EUR, ids.SEK, rateCompany, '2024-02-01'));
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toMatch(/zero/);
  });

  it('one rate per currency, company and day: a second one is a 400 ValidationError', async () => {
    // Through the API, in the key's own company (company isolation refuses the others).
    const body = { currency: ids.EUR, company: ids.company, date: '2024-05-01', rate: 1.15 };
    await ok('POST', '/api/create/CurrencyRate', body);
    const dup = await t.api('POST', '/api/create/CurrencyRate', { ...body, rate: 1.16 });
    expect(dup.statusCode, dup.body).toBe(400);
    expect(dup.json().error).toBe('ValidationError');
    // Another day, or another company, is another rate.
    await ok('POST', '/api/create/CurrencyRate', { ...body, date: '2024-05-02' });
    await t.run(() => CurrencyRate.create({ ...body, company: rateCompany }));
  });

  it('inverse_rate is stored and recomputed when the rate changes', async () => {
    const { id } = await ok('POST', '/api/create/CurrencyRate', { currency: ids.GBP, company: ids.company, date: '2024-07-01', rate: 1.25 });
    const stored = () => t.run(async () => (await rows<{ inverse_rate: number }>(
      sql`SELECT inverse_rate FROM currency_rate WHERE id = ${id}`))[0]!.inverse_rate);
    expect(await stored()).toBe(0.8);
    await ok('PUT', `/api/update/CurrencyRate/${id}`, { rate: 4 });
    expect(await stored()).toBe(0.25);
    expect((await ok('POST', `/api/fetch/CurrencyRate/${id}`, { fields: ['inverse_rate'] })).inverse_rate).toBe(0.25);
    const reg = await ok('GET', '/api/get_registry/CurrencyRate');
    expect(reg.inverse_rate).toMatchObject({ type: 'Float', precision: 10, computed: true, store: true, readonly: true });
  });

  it('defaults the date to today', async () => {
    const { id } = await ok('POST', '/api/create/CurrencyRate', { currency: ids.CHF, company: ids.company, rate: 1.05 });
    const rate = await ok('POST', `/api/fetch/CurrencyRate/${id}`, { fields: ['date'] });
    expect(rate.date).toBe(new Date().toISOString().slice(0, 10));
  });
});

describe('Monetary', () => {
  it('stores NUMERIC: 0.1 + 0.2 is exactly 0.3, stored and summed through the API', async () => {
    for (const amount of [0.1, 0.2]) await ok('POST', '/api/create/MoneyProbe', { name: 'drift', currency: ids.USD, amount });
    const answer = await ok('POST', '/api/query/MoneyProbe', { filter_str: "Q(name='drift')", fields: ['amount'], footer_aggregates: ['amount'] });
    expect(answer.data.map((r: Rec) => r.amount)).toEqual([0.1, 0.2]);
    expect(answer.aggregates.amount).toBe(0.3);
    const [row] = await t.run(() => rows<{ total: string; type: string }>(
      sql`SELECT sum(amount)::text AS total, pg_typeof(sum(amount))::text AS type FROM money_probe WHERE name = 'drift'`));
    expect(row).toEqual({ total: '0.30', type: 'numeric' }); // stored rounded to the cent
  });

  it('is stored rounded to its currency: on create, on an update of the amount, and with a new currency', async () => {
    const stored = async (id: number) => (await ok('POST', `/api/fetch/MoneyProbe/${id}`, { fields: ['amount'] })).amount;
    const usd = await ok('POST', '/api/create/MoneyProbe', { name: 'round usd', currency: ids.USD, amount: 10.005 });
    expect(await stored(usd.id)).toBe(10.01);
    const yen = await ok('POST', '/api/create/MoneyProbe', { name: 'round yen', currency: ids.JPY, amount: 1234.5 });
    expect(await stored(yen.id)).toBe(1235);
    // An update of the amount alone rounds with the record's currency; with a new one, with that.
    await ok('PUT', `/api/update/MoneyProbe/${yen.id}`, { amount: 99.4 });
    expect(await stored(yen.id)).toBe(99);
    await ok('PUT', `/api/update/MoneyProbe/${yen.id}`, { amount: 99.4, currency: ids.USD });
    expect(await stored(yen.id)).toBe(99.4);
    // Half away from zero, exactly (NUMERIC), negatives included.
    const negative = await ok('POST', '/api/create/MoneyProbe', { name: 'round neg', currency: ids.USD, amount: -2.675 });
    expect(await stored(negative.id)).toBe(-2.68);
    // Without a currency the amount is kept as written.
    const bare = await ok('POST', '/api/create/MoneyProbe', { name: 'round none', amount: 1.23456 });
    expect(await stored(bare.id)).toBe(1.23456);
  });

  it('names its currency field in the registry; the client reads symbol and rounding from it', async () => {
    const reg = await ok('GET', '/api/get_registry/MoneyProbe');
    expect(reg.amount).toMatchObject({ type: 'Monetary', currency_field: 'currency' });
    const { id } = await ok('POST', '/api/create/MoneyProbe', { name: 'yen', currency: ids.JPY, amount: 1500 });
    expect(await ok('POST', `/api/fetch/MoneyProbe/${id}`, { fields: ['amount', 'currency.symbol', 'currency.rounding', 'currency.position'] }))
      .toMatchObject({ amount: 1500, currency: { symbol: '¥', rounding: 1, position: 'Before' } });
  });
});

describe('visible_setting in the registry', () => {
  it('shows the condition and whether it holds, following enable_multi_currency', async () => {
    const gated = async () => {
      const [company, probe] = [await ok('GET', '/api/get_registry/Company'), await ok('GET', '/api/get_registry/MoneyProbe')];
      expect(company.currency_rates).toMatchObject({ type: 'OneToMany', related_model: 'CurrencyRate', visible_setting: GATE });
      expect(probe.foreign_amount.visible_setting).toBe(GATE);
      // Ungated fields carry neither.
      expect(probe.amount).not.toHaveProperty('visible_setting');
      expect(probe.amount).not.toHaveProperty('visible_setting_holds');
      expect(probe.foreign_amount.visible_setting_holds).toBe(company.currency_rates.visible_setting_holds);
      return company.currency_rates.visible_setting_holds as boolean;
    };
    expect(await gated()).toBe(false);
    await ok('PUT', `/api/update/Settings/${ids.settings}`, { enable_multi_currency: true });
    expect(await gated()).toBe(true);
    await ok('PUT', `/api/update/Settings/${ids.settings}`, { enable_multi_currency: false });
    expect(await gated()).toBe(false);
  });
});

describe('db create --currency', () => {
  it("makes the code the first company's active currency", async () => {
    const name = `fft_${randomBytes(5).toString('hex')}`;
    try {
      await createDatabase(t.platform, name, { currency: 'eur', adminPassword: 'admin-password-for-tests' });
      const { currency, active } = await t.platform.run(name, {}, async () => {
        const [company] = await Company.query().order_by('id ASC').read(['currency']);
        const activeCodes = (await Currency.query().all()).map((c) => c.name);
        return { currency: (company!.currency as { display_name: string }).display_name, active: activeCodes };
      });
      expect(currency).toBe('EUR');
      expect(active).toEqual(['EUR']);
    } finally {
      t.platform.forget(name);
      await t.engine.drop(name).catch(() => {});
    }
  });

  it('refuses an unknown code with a clear error and leaves no database behind', async () => {
    const name = `fft_${randomBytes(5).toString('hex')}`;
    await expect(createDatabase(t.platform, name, { currency: 'ZZZ' })).rejects.toThrow(/Unknown currency code 'ZZZ'/);
    await expect(createDatabase(t.platform, name, { currency: 'euro' })).rejects.toBeInstanceOf(BadRequest);
    expect(await t.engine.list()).not.toContain(name);
    // The environment of this file's own database is untouched.
    expect(await t.run(async () => currentEnv().registry.has('Currency'))).toBe(true);
  });
});
