/**
 * Named prepared statements on the PostgreSQL engine (src/db/prepared-statements.ts), against the
 * local server. Most engines here have a pool of one connection, so every statement — including
 * the look at `pg_prepared_statements`, which is session-local — runs on the same backend. The
 * look-ups start with a comment so that they are never prepared themselves.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config/settings.js';
import type { TenantDatabase } from '../../src/db/engine.js';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { PostgresEngine, type PostgresEngineOptions } from '../../src/db/postgres-engine.js';
import { isPreparable, PreparingPool, statementName } from '../../src/db/prepared-statements.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres';
const dbName = `t_${randomBytes(4).toString('hex')}_prep`;

function rawUrl(database?: string): string {
  const url = new URL(DATABASE_URL);
  if (!url.username) url.username = 'postgres';
  if (database) url.pathname = `/${database}`;
  return url.href;
}

const engines: PostgresEngine[] = [];
let admin: pg.Client;
/** A raw session on the test database: "someone else" changing the schema. */
let outsider: pg.Client;

async function open(options: Partial<PostgresEngineOptions> = {}): Promise<TenantDatabase> {
  const engine = new PostgresEngine({ url: DATABASE_URL, poolMax: 1, ...options });
  engines.push(engine);
  return engine.open(dbName);
}

interface PreparedRow {
  name: string;
  statement: string;
  executions: number;
}

/** The named statements of the backend behind `db` (pool of one: the backend that ran the others). */
async function prepared(db: TenantDatabase | SqlExecutor): Promise<PreparedRow[]> {
  const kysely = 'executor' in db ? db.executor : db;
  const { rows } = await sql<PreparedRow>`/* inspect */ SELECT name, statement,
      (generic_plans + custom_plans)::int AS executions
    FROM pg_prepared_statements ORDER BY name`.execute(kysely);
  return rows;
}

async function backendPid(db: TenantDatabase | SqlExecutor): Promise<number> {
  const kysely = 'executor' in db ? db.executor : db;
  const { rows } = await sql<{ pid: number }>`/* inspect */ SELECT pg_backend_pid() AS pid`.execute(kysely);
  return rows[0]!.pid;
}

function byId(id: number) {
  return sql<{ id: number; label: string }>`SELECT id, label FROM items WHERE id = ${id}`;
}

beforeAll(async () => {
  const setup = new PostgresEngine({ url: DATABASE_URL });
  engines.push(setup);
  await setup.create(dbName);
  const db = await setup.open(dbName);
  await sql`CREATE TABLE items (id int PRIMARY KEY, label text NOT NULL, amount int)`.execute(db.executor);
  await sql`INSERT INTO items SELECT g, 'item ' || g, g * 10 FROM generate_series(1, 20) g`.execute(db.executor);
  await setup.closeDatabase(dbName);
  admin = new pg.Client({ connectionString: rawUrl() });
  await admin.connect();
  outsider = new pg.Client({ connectionString: rawUrl(dbName) });
  await outsider.connect();
});

afterAll(async () => {
  for (const engine of engines) await engine.close().catch(() => {});
  await outsider?.end().catch(() => {});
  await admin?.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await admin?.end();
});

describe('prepared statements', () => {
  it('prepares a statement once the pool has run it twice, on the backend that ran it, and reuses it', async () => {
    const db = await open();
    const text = byId(1).compile(db.executor).sql;
    const name = statementName(text);
    expect(name).toMatch(/^ff_[0-9a-f]{32}$/);
    const pid = await backendPid(db);

    expect((await byId(1).execute(db.executor)).rows).toEqual([{ id: 1, label: 'item 1' }]);
    expect((await prepared(db)).map((p) => p.name)).not.toContain(name); // seen once: unnamed

    expect((await byId(2).execute(db.executor)).rows).toEqual([{ id: 2, label: 'item 2' }]);
    expect(await prepared(db)).toContainEqual({ name, statement: text, executions: 1 });

    expect((await byId(3).execute(db.executor)).rows).toEqual([{ id: 3, label: 'item 3' }]);
    expect((await byId(4).execute(db.executor)).rows).toEqual([{ id: 4, label: 'item 4' }]);
    // Executed again under the same name, not parsed again.
    expect(await prepared(db)).toContainEqual({ name, statement: text, executions: 3 });
    expect(await backendPid(db)).toBe(pid);
  });

  it('does not prepare a statement run once', async () => {
    const db = await open();
    await sql`SELECT label FROM items WHERE id = ${5} AND amount > ${0}`.execute(db.executor);
    await sql`SELECT count(*) AS n FROM items WHERE amount > 7`.execute(db.executor);
    expect(await prepared(db)).toEqual([]);
  });

  it('never prepares DDL, transaction control, SET or SAVEPOINT', async () => {
    const db = await open();
    for (let i = 0; i < 3; i++) {
      await sql`CREATE TABLE IF NOT EXISTS ddl_probe (id int)`.execute(db.executor);
      await sql`SET statement_timeout = 0`.execute(db.executor);
      await db.executor.transaction().execute(async (trx) => {
        await sql`SAVEPOINT sp`.execute(trx);
        await sql`RELEASE SAVEPOINT sp`.execute(trx);
        await sql`SELECT 1 AS one FROM items WHERE id = ${i + 1}`.execute(trx);
      });
      await sql`SELECT 1; SELECT 2`.execute(db.executor);
    }
    const statements = (await prepared(db)).map((p) => p.statement);
    // The one DML statement was prepared (inside the transaction), nothing else.
    expect(statements).toEqual(['SELECT 1 AS one FROM items WHERE id = $1']);

    expect(isPreparable('  select 1', 0)).toBe(true);
    expect(isPreparable('WITH x AS (SELECT 1) SELECT * FROM x', 0)).toBe(true);
    expect(isPreparable('INSERT INTO t VALUES ($1)', 1)).toBe(true);
    for (const text of ['begin', 'BEGIN', 'commit', 'rollback', 'start transaction isolation level serializable',
      'savepoint "sp"', 'release savepoint "sp"', 'rollback to savepoint "sp"', 'SET search_path = x',
      'CREATE TABLE t (id int)', 'ALTER TABLE t ADD COLUMN x int', 'DROP TABLE t', 'DEALLOCATE ALL',
      'SELECT 1; SELECT 2', 'selectx']) {
      expect(isPreparable(text, 0), text).toBe(false);
    }
  });

  it('names each text once, remembering a bounded number of texts', async () => {
    const pool = new pg.Pool({ connectionString: rawUrl(dbName), max: 1 });
    try {
      const preparing = new PreparingPool(pool, { trackedStatements: 5 });
      const text = (i: number) => `SELECT id FROM items WHERE id = $1 /* ${i} */`;
      expect(preparing.nameOf(text(0), 1)).toBe(statementName(text(0)));
      expect(preparing.nameOf('BEGIN', 0)).toBeNull();
      expect(preparing.nameOf('SELECT 1; SELECT 2', 0)).toBeNull();
      for (let i = 1; i <= 50; i++) expect(preparing.nameOf(text(i), 1)).toBe(statementName(text(i)));
      expect(preparing.namedTexts).toBe(5);
    } finally {
      await pool.end();
    }
  });

  it('returns the same results as unprepared statements', async () => {
    const plain = await open({ prepareStatements: false });
    const named = await open();
    const queries = [
      () => byId(7),
      () => sql`SELECT id, label, amount FROM items WHERE amount BETWEEN ${30} AND ${90} ORDER BY id`,
      () => sql`SELECT ${'text'}::text AS t, ${null}::int AS n, ${true}::bool AS b, ${'12.50'}::numeric AS num,
          ${'9007199254740993'}::bigint AS big, ${new Date('2024-02-29T12:34:56Z')}::timestamptz AS ts,
          ${'2024-02-29'}::date AS d, ${JSON.stringify({ a: [1, 'x'] })}::jsonb AS j, ${[1, 2, 3]}::int[] AS arr`,
      () => sql`SELECT count(*)::int AS n, sum(amount)::int AS total FROM items`,
      () => sql`WITH top AS (SELECT id FROM items ORDER BY amount DESC LIMIT ${3}) SELECT id FROM top ORDER BY id`,
    ];
    for (const query of queries) {
      const expected = (await query().execute(plain.executor)).rows;
      expect(expected.length).toBeGreaterThan(0);
      for (let i = 0; i < 3; i++) expect((await query().execute(named.executor)).rows).toEqual(expected);
    }
    const names = (await prepared(named)).map((p) => p.name);
    for (const query of queries) expect(names).toContain(statementName(query().compile(named.executor).sql));
    expect(await prepared(plain)).toEqual([]);
  });

  it('holds the per-connection cap, evicting the least recently used statement', async () => {
    const db = await open({ maxPreparedStatements: 3 });
    const distinct = (k: number, id: number) =>
      sql<{ v: number }>`SELECT amount + ${sql.lit(k)} AS v FROM items WHERE id = ${id}`; // one text per k
    for (let k = 0; k < 10; k++) {
      for (let run = 1; run <= 3; run++) {
        expect((await distinct(k, run).execute(db.executor)).rows).toEqual([{ v: run * 10 + k }]);
      }
      const now = await prepared(db);
      expect(now.length).toBeLessThanOrEqual(3);
      expect(now.map((p) => p.statement)).toContain(distinct(k, 1).compile(db.executor).sql);
    }
    // The survivors are the three most recently used.
    expect((await prepared(db)).map((p) => p.statement).sort()).toEqual(
      [7, 8, 9].map((k) => distinct(k, 1).compile(db.executor).sql).sort(),
    );
    // A statement evicted long ago still answers, and is prepared again on its next use.
    expect((await distinct(0, 4).execute(db.executor)).rows).toEqual([{ v: 40 }]);
    expect((await distinct(0, 5).execute(db.executor)).rows).toEqual([{ v: 50 }]);
    const after = await prepared(db);
    expect(after.length).toBeLessThanOrEqual(3);
    expect(after.map((p) => p.statement)).toContain(distinct(0, 1).compile(db.executor).sql);
    expect(after.map((p) => p.statement)).not.toContain(distinct(7, 1).compile(db.executor).sql);
    // Use refreshes: after touching 8, a new statement evicts 9, the least recently used.
    expect((await distinct(8, 6).execute(db.executor)).rows).toEqual([{ v: 68 }]);
    expect((await distinct(10, 7).execute(db.executor)).rows).toEqual([{ v: 80 }]);
    expect((await distinct(10, 8).execute(db.executor)).rows).toEqual([{ v: 90 }]);
    expect((await prepared(db)).map((p) => p.statement).sort()).toEqual(
      [0, 8, 10].map((k) => distinct(k, 1).compile(db.executor).sql).sort(),
    );
  });

  it('evicts safely while other queries are queued on the same client', async () => {
    const pool = new pg.Pool({ connectionString: rawUrl(dbName), max: 1 });
    try {
      const preparing = new PreparingPool(pool, { maxPerConnection: 2 });
      const client = await preparing.connect();
      try {
        const results = await Promise.all(
          Array.from({ length: 60 }, (_, i) => client.query<{ v: number }>(`SELECT $1::int * 100 + ${i % 6} AS v`, [i])),
        );
        expect(results.map((r) => r.rows[0]!.v)).toEqual(Array.from({ length: 60 }, (_, i) => i * 100 + (i % 6)));
        const { rows } = await client.query<{ n: number }>('/* inspect */ SELECT count(*)::int AS n FROM pg_prepared_statements', []);
        expect(rows[0]!.n).toBeGreaterThan(0);
        expect(rows[0]!.n).toBeLessThanOrEqual(2);
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it('keeps a prepared SELECT * working after ADD COLUMN and ALTER COLUMN TYPE through the engine', async () => {
    await outsider.query('CREATE TABLE notes (id int PRIMARY KEY, body text)');
    await outsider.query(`INSERT INTO notes VALUES (1, 'one'), (2, 'two')`);
    const db = await open();
    const note = (id: number) => sql<Record<string, unknown>>`SELECT * FROM notes WHERE id = ${id}`;
    await note(1).execute(db.executor);
    await note(1).execute(db.executor);
    expect((await prepared(db)).map((p) => p.name)).toContain(statementName(note(1).compile(db.executor).sql));

    await sql`ALTER TABLE notes ADD COLUMN rank int DEFAULT 5`.execute(db.executor);
    expect((await note(1).execute(db.executor)).rows).toEqual([{ id: 1, body: 'one', rank: 5 }]);
    await sql`ALTER TABLE notes ALTER COLUMN rank TYPE text`.execute(db.executor);
    expect((await note(2).execute(db.executor)).rows).toEqual([{ id: 2, body: 'two', rank: '5' }]);

    // DDL and the statement in one transaction.
    await note(2).execute(db.executor);
    expect((await prepared(db)).map((p) => p.name)).toContain(statementName(note(1).compile(db.executor).sql));
    const inside = await db.executor.transaction().execute(async (trx) => {
      await sql`ALTER TABLE notes ADD COLUMN flag bool DEFAULT true`.execute(trx);
      return (await note(1).execute(trx)).rows;
    });
    expect(inside).toEqual([{ id: 1, body: 'one', rank: '5', flag: true }]);
    expect((await note(1).execute(db.executor)).rows).toEqual(inside);
  });

  it('keeps a prepared statement working on every connection after DDL through another one of the pool', async () => {
    await outsider.query('CREATE TABLE pairs (id int PRIMARY KEY, a int)');
    await outsider.query('INSERT INTO pairs VALUES (1, 10)');
    const db = await open({ poolMax: 2 });
    const pair = sql<Record<string, unknown>>`SELECT * FROM pairs WHERE id = ${1}`;
    /** Runs `pair` in two transactions held open at once, so on both connections. */
    const onBoth = async () => {
      let arrived = 0;
      let go!: () => void;
      const barrier = new Promise<void>((resolve) => (go = resolve));
      return Promise.all(
        [0, 1].map(() =>
          db.executor.transaction().execute(async (trx) => {
            const pid = await backendPid(trx);
            if (++arrived === 2) go();
            await barrier;
            const first = (await pair.execute(trx)).rows;
            const second = (await pair.execute(trx)).rows;
            expect(second).toEqual(first);
            return { pid, rows: first };
          }),
        ),
      );
    };
    const before = await onBoth();
    expect(before[0]!.pid).not.toBe(before[1]!.pid);
    await sql`ALTER TABLE pairs ALTER COLUMN a TYPE bigint, ADD COLUMN b text DEFAULT 'b'`.execute(db.executor);
    const after = await onBoth();
    expect(after.map((r) => r.rows)).toEqual([[{ id: 1, a: '10', b: 'b' }], [{ id: 1, a: '10', b: 'b' }]]);
  });

  it('retries a statement whose plan DDL elsewhere made stale, and recovers inside a transaction on the next attempt', async () => {
    await outsider.query('CREATE TABLE events (id int PRIMARY KEY, kind text)');
    await outsider.query(`INSERT INTO events VALUES (1, 'a'), (2, 'b')`);
    const db = await open();
    const event = (id: number) => sql<Record<string, unknown>>`SELECT * FROM events WHERE id = ${id}`;
    const name = statementName(event(1).compile(db.executor).sql);
    await event(1).execute(db.executor);
    await event(1).execute(db.executor);
    expect((await prepared(db)).map((p) => p.name)).toContain(name);

    // Outside a transaction: invisible to the caller.
    await outsider.query('ALTER TABLE events ADD COLUMN seen bool DEFAULT false');
    const before = db.statementCount;
    expect((await event(1).execute(db.executor)).rows).toEqual([{ id: 1, kind: 'a', seen: false }]);
    expect(db.statementCount).toBe(before + 1); // the retry is not a second statement
    await outsider.query('ALTER TABLE events ALTER COLUMN seen TYPE text');
    expect((await event(2).execute(db.executor)).rows).toEqual([{ id: 2, kind: 'b', seen: 'false' }]);
    await event(2).execute(db.executor);
    expect((await prepared(db)).map((p) => p.name)).toContain(name); // prepared again

    // Inside a transaction PostgreSQL aborts it; the next attempt works.
    await outsider.query('ALTER TABLE events ADD COLUMN extra int DEFAULT 7');
    const attempt = () => db.executor.transaction().execute(async (trx) => (await event(1).execute(trx)).rows);
    await expect(attempt()).rejects.toMatchObject({ code: '0A000' });
    expect(await attempt()).toEqual([{ id: 1, kind: 'a', seen: 'false', extra: 7 }]);
    expect(await attempt()).toEqual([{ id: 1, kind: 'a', seen: 'false', extra: 7 }]);
  });

  it('prepares nothing when prepareStatements is false (FF_PG_PREPARE=0)', async () => {
    const db = await open({ prepareStatements: false });
    for (let i = 1; i <= 5; i++) {
      expect((await byId(i).execute(db.executor)).rows).toEqual([{ id: i, label: `item ${i}` }]);
      await (db.executor as Kysely<any>).selectFrom('items').select('label').where('id', '=', i).execute();
    }
    expect(await prepared(db)).toEqual([]);

    expect(readSettings({ FF_PG_PREPARE: '0' }).pgPrepare).toBe(false);
    expect(readSettings({}).pgPrepare).toBe(true);
    expect(readSettings({ FF_PG_PREPARE: '1' }).pgPrepare).toBe(true);
  });

  it('counts the same statements with and without prepared statements (no DEALLOCATE, no retries)', async () => {
    await outsider.query('CREATE TABLE counted (id int PRIMARY KEY, v int)');
    await outsider.query('INSERT INTO counted SELECT g, g FROM generate_series(1, 5) g');
    const workload = async (db: TenantDatabase, column: string): Promise<string[]> => {
      const seen: string[] = [];
      const off = db.onStatement((s) => seen.push(s));
      try {
        for (let round = 0; round < 3; round++) {
          for (let k = 0; k < 4; k++) {
            await sql`SELECT v + ${sql.lit(k)} AS v FROM counted WHERE id = ${round + 1}`.execute(db.executor);
          }
          await (db.executor as Kysely<any>).transaction().execute(async (trx) => {
            await trx.updateTable('counted').set({ v: round }).where('id', '=', 5).execute();
            await sql`SELECT id, v FROM counted WHERE id = ${5}`.execute(trx);
          });
        }
        await sql`SELECT * FROM counted WHERE id = ${5}`.execute(db.executor);
        await sql`SELECT * FROM counted WHERE id = ${5}`.execute(db.executor);
        await outsider.query(`ALTER TABLE counted ADD COLUMN ${column} int`); // a stale plan: retried
        const { rows } = await sql`SELECT * FROM counted WHERE id = ${5}`.execute(db.executor);
        expect(Object.keys(rows[0]!)).toContain(column);
      } finally {
        off();
      }
      return seen;
    };
    const plain = await open({ prepareStatements: false });
    const named = await open({ maxPreparedStatements: 2 }); // evictions too, inside transactions as well
    const plainSeen = await workload(plain, 'w1');
    const before = named.statementCount;
    const namedSeen = await workload(named, 'w2');
    expect(named.statementCount - before).toBe(namedSeen.length);
    expect(namedSeen).toEqual(plainSeen);
    expect(namedSeen).toHaveLength(3 * (4 + 4) + 3);
    expect(namedSeen.join('\n')).not.toMatch(/deallocate/i);
    // The retry dropped the connection's statements; the next run prepares again.
    await sql`SELECT * FROM counted WHERE id = ${5}`.execute(named.executor);
    expect((await prepared(named)).map((p) => p.statement)).toEqual(['SELECT * FROM counted WHERE id = $1']);
  });
});
