/**
 * A unit of work that PostgreSQL picks as the victim of a deadlock is run again (as Odoo retries
 * a request on a concurrency failure) instead of failing: two units of work that write the same
 * two records in opposite orders both succeed, the victim's work running a second time in a new
 * transaction, and nothing of its first attempt is left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Contact } from '../../modules/contacts/models/contact.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await testDatabase('full');
});
afterAll(async () => {
  await t?.close();
});

/** A promise with its resolve function. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('unit of work retry', () => {
  it('runs a deadlock victim again: both units of work succeed, each write applied once', async () => {
    const [a, b] = await t.run(async () => [(await Contact.create({ name: 'A', phone: '0' })).id, (await Contact.create({ name: 'B', phone: '0' })).id]);
    const runs = { first: 0, second: 0 };
    const bothHoldOne = { first: signal(), second: signal() };
    // Each locks one record, waits until the other holds the other record, then wants it too.
    const crossing = (me: 'first' | 'second', own: number, other: number) => t.run(async () => {
      runs[me]++;
      await Contact.query({ id: own }).update({ name: `${me} was here` });
      if (runs[me] === 1) {
        bothHoldOne[me].resolve();
        await bothHoldOne[me === 'first' ? 'second' : 'first'].promise;
      }
      // A counter, not a constant: a second application of an attempt's writes would show.
      const [row] = await Contact.query({ id: other }).read(['phone']);
      await Contact.query({ id: other }).update({ phone: String(Number(row!.phone) + 1) });
    });
    await Promise.all([crossing('first', a, b), crossing('second', b, a)]);
    // PostgreSQL broke the cycle by rolling one back; that one ran a second time.
    expect(runs.first + runs.second).toBe(3);
    const rows = await t.run(() => Contact.query({ id__in: [a, b] }).order_by('id ASC').read(['name', 'phone']));
    expect(rows.map((r) => [r.name, r.phone])).toEqual([['first was here', '1'], ['second was here', '1']]);
  });
});
