/**
 * The ORM's fragments go straight to the pool's connections (src/db/direct-statements.ts), beside
 * Kysely: the same transaction for both, the same statement counts, nothing ever sent on a
 * connection after its transaction ended, and the server's errors as they were.
 */
import { sql as kyselySql, type Kysely } from 'kysely';
import type pg from 'pg';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { directRunner, type DirectStatements } from '../../src/db/direct-statements.js';
import { sql } from '../../src/db/sql-fragment.js';
import type { StatementCounter } from '../../src/db/statement-counter.js';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { itemsDatabase } from '../support/direct-stack.js';

let statements: string[] = [];
// As the PostgreSQL engine builds an open database: pg pool → prepared statements → translation.
const items = itemsDatabase('direct', 3, { onStatement: (text) => statements.push(text) });
let pool: pg.Pool;
let db: Kysely<any>;
let direct: DirectStatements;
let counter: StatementCounter;
beforeAll(() => {
  ({ pool, db, direct, counter } = items.stack);
});
beforeEach(() => {
  statements = [];
});
const labels = () => items.labels();

describe('direct statements', () => {
  it('a fragment on the pool runs directly, answers as Kysely does, and is counted once', async () => {
    expect(directRunner(db)).toBe(direct);
    const before = counter.count;
    const inserted = await sql<{ id: number }>`INSERT INTO items (id, label) VALUES (${1}, ${'one'}), (${2}, ${'two'}) RETURNING id`.execute(db);
    expect(inserted.rows).toEqual([{ id: 1 }, { id: 2 }]);
    expect(inserted.numAffectedRows).toBe(2n);
    const read = await sql<{ n: number }>`SELECT count(*)::int AS n FROM items`.execute(db);
    expect(read).toEqual({ rows: [{ n: 2 }] }); // no numAffectedRows for a SELECT, as Kysely
    expect(counter.count - before).toBe(2);
    expect(statements.map((s) => s.split(' ')[0])).toEqual(['INSERT', 'SELECT']);
  });

  it("fragments and Kysely's executor in one transaction share its connection and its fate", async () => {
    await expect(direct.transaction(async (trx) => {
      expect(directRunner(trx)).toBeDefined();
      const pids = new Set<number>();
      pids.add((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid);
      pids.add((await kyselySql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid);
      await sql`INSERT INTO items (id, label) VALUES (${1}, ${'by fragment'})`.execute(trx);
      await kyselySql`INSERT INTO items (id, label) VALUES (${2}, ${'by Kysely'})`.execute(trx);
      const seen = await kyselySql<{ label: string }>`SELECT label FROM items ORDER BY id`.execute(trx);
      expect(seen.rows.map((r) => r.label)).toEqual(['by fragment', 'by Kysely']);
      expect(pids.size).toBe(1);
      throw new Error('undo');
    })).rejects.toThrow('undo');
    expect(await labels()).toEqual([]);
    // BEGIN and ROLLBACK are counted as Kysely counts them.
    expect(statements[0]).toBe('begin');
    expect(statements.at(-2)).toBe('rollback');
  });

  it('commits what the transaction wrote, and counts begin … commit', async () => {
    const result = await direct.transaction(async (trx) => {
      await sql`INSERT INTO items (id, label) VALUES (${1}, ${'kept'})`.execute(trx);
      return 'done';
    });
    expect(result).toBe('done');
    expect(statements).toEqual(['begin', 'INSERT INTO items (id, label) VALUES ($1, $2)', 'commit']);
    expect(await labels()).toEqual(['kept']);
  });

  it('a transaction used after it ended refuses, and sends nothing on the released connection', async () => {
    let kept: SqlExecutor | undefined;
    await direct.transaction(async (trx) => {
      kept = trx;
    });
    const before = counter.count;
    await expect(sql`INSERT INTO items (id, label) VALUES (${9}, ${'late'})`.execute(kept!)).rejects.toThrow(/already committed or rolled back/);
    await expect(kyselySql`INSERT INTO items (id, label) VALUES (${9}, ${'late'})`.execute(kept!)).rejects.toThrow(/already committed or rolled back/);
    expect(counter.count).toBe(before);
    expect(await labels()).toEqual([]);
  });

  it("a failing statement keeps the server's error, is counted, and the transaction rolls back whole", async () => {
    const failure = await direct.transaction(async (trx) => {
      await sql`INSERT INTO items (id, label) VALUES (${1}, ${'first'})`.execute(trx);
      await sql`INSERT INTO items (id, label) VALUES (${1}, ${'duplicate'})`.execute(trx);
    }).catch((error: unknown) => error);
    expect((failure as { code?: string }).code).toBe('23505');
    expect(statements.filter((s) => s.startsWith('INSERT'))).toHaveLength(2);
    expect(await labels()).toEqual([]);
    // The connection went back clean: the next unit of work commits normally.
    await direct.transaction((trx) => sql`INSERT INTO items (id, label) VALUES (${2}, ${'after'})`.execute(trx));
    expect(await labels()).toEqual(['after']);
  });

  it('a statement listener that throws fails the statement (query budgets), as with Kysely', async () => {
    const off = counter.on(() => {
      throw new Error('over budget');
    });
    try {
      await expect(sql`SELECT 1 AS one`.execute(db)).rejects.toThrow('over budget');
      await expect(kyselySql`SELECT 1 AS one`.execute(db)).rejects.toThrow('over budget');
    } finally {
      off();
    }
  });

  it('concurrent fragments in one transaction run one after the other on its connection', async () => {
    await direct.transaction(async (trx) => {
      await Promise.all(Array.from({ length: 20 }, (_, i) => sql`INSERT INTO items (id, label) VALUES (${i}, ${`n${i}`})`.execute(trx)));
    });
    expect(await labels()).toHaveLength(20);
  });
});
