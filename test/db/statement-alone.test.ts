/**
 * A unit of work's only statement runs alone (`PreparingClient.queryAlone`, through
 * `DirectStatements`): sent without BEGIN, PostgreSQL commits it by itself, and the COMMIT that
 * follows sends nothing — one round trip for the whole unit of work. Failed, it wrote nothing and
 * the unit of work goes on in a transaction; once it has committed, nothing more can run in that
 * unit of work, nor undo it. Round trips are PostgreSQL's ReadyForQuery messages on the real
 * connection, with the transaction status each one reports ('I' idle, 'T' in a transaction).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { sendsNextAlone } from '../../src/db/direct-statements.js';
import { sql } from '../../src/db/sql-fragment.js';
import { itemsDatabase } from '../support/direct-stack.js';

let statements: string[] = [];
let statuses: string[] = [];
const items = itemsDatabase('alone', 1, { onStatus: (status) => statuses.push(status), onStatement: (text) => statements.push(text) });
beforeEach(() => {
  statements = [];
  statuses = [];
});

const insert = (id: number, label: string) => sql<{ id: number }>`INSERT INTO items (id, label) VALUES (${id}, ${label}) RETURNING id`;
const labels = () => items.labels();
const ALONE = { alone: true } as const;

describe('a statement run alone', () => {
  it('is the whole unit of work in one round trip: sent without BEGIN, committed by PostgreSQL, counted as before', async () => {
    for (let i = 1; i <= 3; i++) {
      statuses = [];
      statements = [];
      const rows = await items.stack.direct.transaction(async (trx) => {
        expect(sendsNextAlone(trx)).toBe(true);
        return (await insert(i, `item ${i}`).execute(trx, ALONE)).rows;
      });
      expect(rows).toEqual([{ id: i }]);
      // Unnamed at first, named from the second use: alone either way, and never inside a transaction.
      expect(statuses).toEqual(['I']);
      expect(statements.map((s) => s.split(' ')[0])).toEqual(['begin', 'INSERT', 'commit']);
    }
    expect(await labels()).toEqual(['item 1', 'item 2', 'item 3']);
  });

  it('is an ordinary statement of the transaction when something was sent before it', async () => {
    await items.stack.direct.transaction(async (trx) => {
      await insert(1, 'first').execute(trx);
      expect(sendsNextAlone(trx)).toBe(false);
      await insert(2, 'second').execute(trx, ALONE);
    });
    expect(statuses).toEqual(['T', 'T', 'I']); // BEGIN with the first, the second, COMMIT
    expect(await labels()).toEqual(['first', 'second']);
    expect(sendsNextAlone(items.stack.db)).toBe(false); // the pool: every statement commits by itself anyway
  });

  it('failed, wrote nothing, and the unit of work goes on in a transaction of its own', async () => {
    await insert(1, 'existing').execute(items.stack.db);
    statuses = [];
    await items.stack.direct.transaction(async (trx) => {
      await expect(insert(1, 'duplicate').execute(trx, ALONE)).rejects.toMatchObject({ code: '23505' });
      expect(sendsNextAlone(trx)).toBe(true);
      await insert(2, 'instead').execute(trx);
      await insert(3, 'and this').execute(trx);
    });
    expect(statuses).toEqual(['I', 'T', 'T', 'I']); // the failed statement alone; BEGIN with the next
    expect(await labels()).toEqual(['existing', 'instead', 'and this']);

    // And a unit of work that gives up after it rolls back nothing, since nothing was written.
    statuses = [];
    await expect(items.stack.direct.transaction(async (trx) => {
      await insert(1, 'duplicate').execute(trx, ALONE);
    })).rejects.toMatchObject({ code: '23505' });
    // pg settles a failed query on its ErrorResponse; the ReadyForQuery after it may come in a
    // later packet, so it is waited for rather than expected at once.
    await vi.waitFor(() => expect(statuses).toEqual(['I']));
    expect(await labels()).toEqual(['existing', 'instead', 'and this']);
  });

  it('once committed, refuses anything more in its unit of work without sending it, a rollback included', async () => {
    await expect(items.stack.direct.transaction(async (trx) => {
      await insert(1, 'committed').execute(trx, ALONE);
      await insert(2, 'too late').execute(trx);
    })).rejects.toThrow(/only statement has committed/);
    expect(statuses).toEqual(['I']); // the second statement, and the ROLLBACK, never left
    expect(await labels()).toEqual(['committed']);

    // A unit of work that fails after it cannot undo it: the failure says so rather than pretend.
    statuses = [];
    await expect(items.stack.direct.transaction(async (trx) => {
      await insert(3, 'also committed').execute(trx, ALONE);
      throw new Error('refused afterwards');
    })).rejects.toThrow(/only statement has committed/);
    expect(statuses).toEqual(['I']);
    expect(await labels()).toEqual(['committed', 'also committed']);

    // The connection is clean for the next unit of work.
    await items.stack.direct.transaction(async (trx) => {
      await insert(4, 'next').execute(trx);
    });
    expect(await labels()).toEqual(['committed', 'also committed', 'next']);
  });
});
