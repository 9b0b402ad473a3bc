/**
 * Databases with the same modules share one registry (issue 29 item 1): a thousand tenants of one
 * product cost one set of compiled models and plans, not a thousand. A database whose modules
 * differ (one more installed) gets a registry of its own at once, and the others keep theirs; what
 * each database holds stays its own.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
const others: string[] = [];

beforeAll(async () => {
  t = await testDatabase('full');
  for (let i = 0; i < 2; i++) {
    const name = `fft_${randomBytes(5).toString('hex')}`;
    await t.engine.clone(t.name, name);
    others.push(name);
  }
}, 60_000);
afterAll(async () => {
  for (const name of others) await t?.engine.drop(name).catch(() => {});
  await t?.close();
});

describe('registries shared between databases', () => {
  it('is one registry for the databases with the same modules, each database keeping its own rows', async () => {
    const [a, b] = others as [string, string];
    const mine = await t.platform.registry(t.name);
    expect(await t.platform.registry(a)).toBe(mine);
    expect(await t.platform.registry(b)).toBe(mine);
    await t.platform.run(a, {}, () => Contact.create({ name: 'Only in A' }));
    const count = (db: string) => t.platform.run(db, {}, () => Contact.query({ name: 'Only in A' }).count());
    expect([await count(t.name), await count(a), await count(b)]).toEqual([0, 1, 0]);
  });

  it('gives a database its own registry once its modules differ, and leaves the others theirs', async () => {
    const [a, b] = others as [string, string];
    const before = await t.platform.registry(a);
    await t.platform.install(b, { init: ['sales'] });
    const after = await t.platform.registry(b);
    expect(after).not.toBe(before);
    expect(after.has('SaleOrder')).toBe(true);
    expect((await t.platform.registry(a)).has('SaleOrder')).toBe(false);
    expect(await t.platform.registry(a)).toBe(before);
    expect(await t.platform.registry(t.name)).toBe(before);
  }, 60_000);
});
