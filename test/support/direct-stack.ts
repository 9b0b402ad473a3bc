/**
 * The PostgreSQL engine's statement stack over a bare database, as `PooledDatabase` builds it
 * (pg pool → prepared statements → translation → Kysely, and the ORM's direct statements beside
 * it), for driver-level tests; and a watch on PostgreSQL's ReadyForQuery messages, one per round
 * trip, with the transaction status each reports ('I' idle, 'T' in a transaction, 'E' failed).
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { DirectStatements } from '../../src/db/direct-statements.js';
import { PreparingPool } from '../../src/db/prepared-statements.js';
import { StatementCounter } from '../../src/db/statement-counter.js';
import { TranslatingPool } from '../../src/db/translating-pool.js';
import { bareDatabase, type BareDatabase } from './bare-database.js';

/** Calls `onStatus` with the status of every ReadyForQuery the pool's connections receive. */
export function watchRoundTrips(pool: pg.Pool, onStatus: (status: string) => void): void {
  pool.on('connect', (client) => {
    (client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', (message: { status: string }) => onStatus(message.status));
  });
}

export interface DirectStack {
  pool: pg.Pool;
  db: Kysely<any>;
  direct: DirectStatements;
  counter: StatementCounter;
}

export function directStack(database: BareDatabase, max: number, onStatus?: (status: string) => void): DirectStack {
  const pool = new pg.Pool({ connectionString: database.url, max });
  if (onStatus) watchRoundTrips(pool, onStatus);
  const counter = new StatementCounter();
  const translating = new TranslatingPool(new PreparingPool(pool), database.name, () => {});
  const dialect = new PostgresDialect({ pool: translating });
  const db = new Kysely<any>({ dialect, log: counter.logger });
  return { pool, db, direct: new DirectStatements(translating, counter, db), counter };
}

export interface ItemsDatabase {
  /** The stack, once `beforeAll` has built it. */
  readonly stack: DirectStack;
  /** The labels of `items`, by id. */
  labels(): Promise<string[]>;
}

/**
 * Registers a driver test file's hooks: a bare database with an `items (id, label)` table under a
 * `directStack` (built before all tests, dropped after), emptied before each test.
 */
export function itemsDatabase(label: string, max: number, watch: { onStatus?: (status: string) => void; onStatement?: (text: string) => void } = {}): ItemsDatabase {
  let database: BareDatabase | undefined;
  let stack: DirectStack | undefined;
  beforeAll(async () => {
    database = await bareDatabase(label);
    stack = directStack(database, max, watch.onStatus);
    if (watch.onStatement) stack.counter.on(watch.onStatement);
    await sql`CREATE TABLE items (id int PRIMARY KEY, label text NOT NULL)`.execute(stack.db);
  });
  afterAll(async () => {
    await stack?.db.destroy();
    await database?.drop();
  });
  beforeEach(async () => {
    await sql`TRUNCATE items`.execute(stack!.db);
  });
  return {
    get stack() {
      return stack!;
    },
    async labels() {
      return (await sql<{ label: string }>`SELECT label FROM items ORDER BY id`.execute(stack!.db)).rows.map((r) => r.label);
    },
  };
}
