/**
 * A transaction's BEGIN travels with its first statement (src/db/begin-with-statement.ts, held by
 * `PreparingPool`): one round trip less per unit of work, none at all for a unit of work that runs
 * no statement, and the same transaction as before — atomic, one snapshot's `now()`, the same
 * errors. Round trips are counted as PostgreSQL's ReadyForQuery messages on the real connection.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PreparingPool } from '../../src/db/prepared-statements.js';
import { bareDatabase, type BareDatabase } from '../support/bare-database.js';
import { watchRoundTrips } from '../support/direct-stack.js';

let database: BareDatabase;
let pool: pg.Pool;
let preparing: PreparingPool;
let db: Kysely<any>;
/** ReadyForQuery messages received: one per round trip. */
let roundTrips = 0;
/** Transaction status after each round trip ('I' idle, 'T' in a transaction, 'E' failed). */
let statuses: string[] = [];

beforeAll(async () => {
  database = await bareDatabase('begin');
  pool = new pg.Pool({ connectionString: database.url, max: 1 });
  watchRoundTrips(pool, (status) => {
    roundTrips++;
    statuses.push(status);
  });
  preparing = new PreparingPool(pool);
  db = new Kysely<any>({ dialect: new PostgresDialect({ pool: preparing }) });
  await sql`CREATE TABLE items (id int PRIMARY KEY, label text NOT NULL)`.execute(db);
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

beforeEach(async () => {
  await sql`TRUNCATE items`.execute(db);
  roundTrips = 0;
  statuses = [];
});

const insert = (id: number, label: string) => sql`INSERT INTO items (id, label) VALUES (${id}, ${label}) RETURNING id`;

/**
 * Hands pg the server's replies one protocol message per read, each in a macrotask of its own, so
 * that promise continuations run between an ErrorResponse and the ReadyForQuery after it.
 */
function deliverOneMessagePerRead(client: pg.PoolClient): void {
  const stream = (client as unknown as { connection: { stream: NodeJS.EventEmitter } }).connection.stream;
  const emit = stream.emit.bind(stream);
  let pending = Buffer.alloc(0);
  const messages: Buffer[] = [];
  let delivering = false;
  const deliverNext = (): void => {
    const message = messages.shift();
    if (!message) {
      delivering = false;
      return;
    }
    emit('data', message);
    setImmediate(deliverNext);
  };
  stream.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event !== 'data') return emit(event, ...args);
    pending = Buffer.concat([pending, args[0] as Buffer]);
    // A message is its type byte and a 32-bit length that counts itself but not the type byte.
    while (pending.length >= 5 && pending.length >= pending.readUInt32BE(1) + 1) {
      const end = pending.readUInt32BE(1) + 1;
      messages.push(pending.subarray(0, end));
      pending = pending.subarray(end);
    }
    if (!delivering && messages.length > 0) {
      delivering = true;
      setImmediate(deliverNext);
    }
    return true;
  }) as typeof stream.emit;
}

async function labels(): Promise<string[]> {
  const { rows } = await sql<{ label: string }>`SELECT label FROM items ORDER BY id`.execute(db);
  return rows.map((r) => r.label);
}

describe('BEGIN with the first statement', () => {
  it('a one-statement unit of work is two round trips (BEGIN + statement, COMMIT), and it commits', async () => {
    for (let i = 1; i <= 3; i++) {
      const before = roundTrips;
      const rows = await db.transaction().execute(async (trx) => (await insert(i, `item ${i}`).execute(trx)).rows);
      expect(rows).toEqual([{ id: i }]);
      // Unnamed on first use, named from the second (minUses 2): both travel with BEGIN once parsed.
      if (i !== 2) expect(roundTrips - before).toBe(2);
    }
    expect(await labels()).toEqual(['item 1', 'item 2', 'item 3']);
  });

  it('a unit of work that runs no statement sends nothing', async () => {
    const result = await db.transaction().execute(async () => 'done');
    expect(result).toBe('done');
    expect(roundTrips).toBe(0);
    await expect(db.transaction().execute(async () => { throw new Error('refused before any statement'); })).rejects.toThrow('refused');
    expect(roundTrips).toBe(0);
  });

  it('is one transaction: every statement sees the time it began, and a failure undoes them all', async () => {
    const times = await db.transaction().execute(async (trx) => {
      const first = await sql<{ t: string }>`SELECT now()::text AS t, ${1}::int AS one`.execute(trx);
      await new Promise((r) => setTimeout(r, 20));
      const second = await sql<{ t: string }>`SELECT now()::text AS t`.execute(trx);
      return [first.rows[0]!.t, second.rows[0]!.t];
    });
    expect(times[1]).toBe(times[0]);
    expect(statuses[0]).toBe('T'); // the first round trip left a transaction open

    await expect(db.transaction().execute(async (trx) => {
      await insert(10, 'written first').execute(trx);
      await insert(11, 'written second').execute(trx);
      throw new Error('then refused');
    })).rejects.toThrow('then refused');
    expect(await labels()).toEqual([]);
  });

  it('a first statement that fails fails the transaction as before: the error surfaces, nothing is written, the connection is reusable', async () => {
    await insert(1, 'existing').execute(db);
    for (let attempt = 0; attempt < 3; attempt++) {
      statuses = [];
      const failing = db.transaction().execute(async (trx) => {
        await insert(1, 'duplicate').execute(trx);
        await insert(2, 'never').execute(trx);
      });
      await expect(failing).rejects.toMatchObject({ code: '23505' });
      expect(statuses[0]).toBe('E'); // failed inside the transaction BEGIN opened, then rolled back
      expect(statuses.at(-1)).toBe('I');
    }
    expect(await labels()).toEqual(['existing']);
    expect(pool.totalCount).toBe(1);
  });

  it('a statement pg sends without parameters, or a named statement not yet parsed here, is preceded by BEGIN on its own', async () => {
    // No parameters: pg's simple protocol, which cannot follow BEGIN's unsynced messages.
    const before = roundTrips;
    const times = await db.transaction().execute(async (trx) => {
      const a = await sql<{ t: string }>`SELECT now()::text AS t`.execute(trx);
      await new Promise((r) => setTimeout(r, 20));
      const b = await sql<{ t: string }>`SELECT now()::text AS t`.execute(trx);
      return [a.rows[0]!.t, b.rows[0]!.t];
    });
    expect(times[1]).toBe(times[0]);
    expect(roundTrips - before).toBe(4); // BEGIN, two statements, COMMIT

    // A fresh text, seen twice (named from the second run) with the pool's client already holding
    // other names: the second run parses it inside the transaction, after a BEGIN of its own.
    for (let run = 0; run < 3; run++) {
      const label = await db.transaction().execute(async (trx) => {
        await insert(100 + run, `run ${run}`).execute(trx);
        const { rows } = await sql<{ label: string }>`SELECT label FROM items WHERE id = ${100 + run} /* fresh */`.execute(trx);
        return rows[0]!.label;
      });
      expect(label).toBe(`run ${run}`);
    }
    expect(await labels()).toEqual(['run 0', 'run 1', 'run 2']);
  });

  it('a transaction with an isolation level is sent as is', async () => {
    const level = await db.transaction().setIsolationLevel('serializable').execute(async (trx) => {
      const { rows } = await sql<{ transaction_isolation: string }>`SHOW transaction_isolation`.execute(trx);
      return rows[0]!.transaction_isolation;
    });
    expect(level).toBe('serializable');
  });

  it('a stale plan in the first statement fails the transaction, not a retry, even when the replies are read one message at a time', async () => {
    // pg fails a query on PostgreSQL's ErrorResponse, before it has read the ReadyForQuery that
    // says the transaction failed. Delivered one message per read (a slow network, or a reply split
    // across TCP segments), the wrapper must not take the connection for idle and retry the
    // statement inside the aborted transaction (25P02).
    const splitPool = new pg.Pool({ connectionString: database.url, max: 1 });
    splitPool.on('connect', (client) => deliverOneMessagePerRead(client));
    const split = new Kysely<any>({ dialect: new PostgresDialect({ pool: new PreparingPool(splitPool) }) });
    const outsider = new pg.Client({ connectionString: database.url });
    await outsider.connect();
    try {
      await outsider.query('CREATE TABLE events (id int PRIMARY KEY, kind text)');
      await outsider.query(`INSERT INTO events VALUES (1, 'a')`);
      const event = (id: number) => sql<Record<string, unknown>>`SELECT * FROM events WHERE id = ${id}`;
      const attempt = () => split.transaction().execute(async (trx) => (await event(1).execute(trx)).rows);
      expect(await attempt()).toEqual([{ id: 1, kind: 'a' }]);
      expect(await attempt()).toEqual([{ id: 1, kind: 'a' }]); // named and parsed: it travels with BEGIN
      await outsider.query('ALTER TABLE events ADD COLUMN seen bool DEFAULT false');
      await expect(attempt()).rejects.toMatchObject({ code: '0A000' });
      expect(await attempt()).toEqual([{ id: 1, kind: 'a', seen: false }]);
      expect(await attempt()).toEqual([{ id: 1, kind: 'a', seen: false }]);
      expect(splitPool.totalCount).toBe(1); // the same connection throughout
    } finally {
      await split.destroy();
      await outsider.query('DROP TABLE IF EXISTS events');
      await outsider.end();
    }
  });

  it('a savepoint or a cursor-like query after the held BEGIN is preceded by it', async () => {
    // SAVEPOINT outside a transaction block fails: it works, so BEGIN went first.
    await db.transaction().execute(async (trx) => {
      await sql`SAVEPOINT sp1`.execute(trx);
      await insert(1, 'undone').execute(trx);
      await sql`ROLLBACK TO SAVEPOINT sp1`.execute(trx);
      await insert(2, 'kept').execute(trx);
    });
    expect(await labels()).toEqual(['kept']);
    // Through the wrapper directly, as Kysely's streaming would: a Submittable, not a string.
    const client = await preparing.connect();
    try {
      await client.query('begin', []);
      const streamed = await new Promise<pg.QueryResult>((resolve, reject) => {
        client.query(new pg.Query({ text: 'SELECT now()::text AS t, txid_current() AS x', callback: (e: Error | null, r: pg.QueryResult) => (e ? reject(e) : resolve(r)) } as any) as any);
      });
      await new Promise((r) => setTimeout(r, 20));
      const after = await client.query<{ t: string; x: string }>('SELECT now()::text AS t, txid_current() AS x', []);
      expect(after.rows[0]).toEqual(streamed.rows[0]); // one transaction
      await client.query('commit', []);
    } finally {
      client.release();
    }
  });
});
