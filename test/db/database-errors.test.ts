/**
 * The one translation of database failures (`src/db/database-errors.ts`), fed with the errors real
 * statements raise — on the PostgreSQL server (15) and on PGlite (PostgreSQL 18), which differ:
 * PostgreSQL 18 reports an on_delete RESTRICT key as 23001 where 15 says 23503. Every code of the
 * integrity class 23 must become a `ValidationError` naming what was broken; the server's
 * conditions (timeouts, locks, deadlocks, a lost connection, a missing database) a 4xx/503 of the
 * catalogue; anything else stays what it was (a 500 stays a 500).
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql, type Transaction } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionFailure, sqlState, translateDatabaseError, translateDataError, type ConstraintDescriptions } from '../../src/db/database-errors.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import {
  DatabaseBusy, DatabaseNotFound, DatabaseUnavailable, FieldForgeError, StatementTimeout, ValidationError,
} from '../../src/errors.js';
import { TEST_DATABASE_URL } from '../support/services.js';

/** Several statements: run with the simple query protocol (`sql.raw` on pg, `exec` on PGlite). */
const SCHEMA = `
  CREATE TABLE ff_owner (
    id serial PRIMARY KEY,
    name varchar(20) NOT NULL,
    score integer CONSTRAINT ff_owner_score_check CHECK (score >= 0),
    code text CONSTRAINT ff_owner_code_uniq UNIQUE,
    region text, city text,
    CONSTRAINT ff_owner_region_city_uniq UNIQUE (region, city)
  );
  CREATE TABLE ff_pet (id serial PRIMARY KEY, owner_id integer CONSTRAINT ff_pet_owner_id_fkey REFERENCES ff_owner (id) ON DELETE RESTRICT);
  CREATE TABLE ff_booking (id serial PRIMARY KEY, span int4range, CONSTRAINT ff_booking_span_excl EXCLUDE USING gist (span WITH &&));
  INSERT INTO ff_owner (name, score, code, region, city) VALUES ('Ada', 1, 'A1', 'north', 'York'), ('Bob', 2, 'B2', NULL, NULL); -- ids 1, 2
  INSERT INTO ff_pet (owner_id) VALUES (1);
  INSERT INTO ff_booking (span) VALUES ('[1,5)');
`;

/** How the model layer would name these tables (the registry's part, in `orm/execute-sql.ts`). */
const MODEL_NAMES: ConstraintDescriptions = {
  constraint: (name) => (name === 'ff_pet_owner_id_fkey' ? { model: 'Pet', fields: ['owner'], target: 'Owner' } : undefined),
  model: (table) => ({ ff_owner: 'Owner', ff_pet: 'Pet', ff_booking: 'Booking' })[table],
  field: (table, column) => (table === 'ff_pet' && column === 'owner_id' ? 'owner' : column),
};

/** The same, also naming each table's model and declaring a message for the unique `code` key. */
const OWNED_NAMES: ConstraintDescriptions = {
  ...MODEL_NAMES,
  constraint: (name) => (name === 'ff_owner_code_uniq' ? { model: 'Owner', fields: ['code'], message: 'Owner codes are unique' } : MODEL_NAMES.constraint(name)),
  modelName: (table) => ({ ff_owner: 'Owner', ff_pet: 'Pet' })[table],
};

/** What the error body's `field` is built from: the refused field and its model, as data. */
function refusedAbout(error: unknown): { field?: string; model?: string } {
  const translated = translateDatabaseError(error, OWNED_NAMES) as ValidationError;
  return { field: translated.field, model: translated.fieldModel };
}

/** The error `query` fails with, inside a transaction that is rolled back (the database stays as seeded). */
async function failure(db: Kysely<any>, query: (trx: Transaction<any>) => Promise<unknown>): Promise<unknown> {
  let caught: unknown;
  await db.transaction().execute(async (trx) => {
    await sql`SAVEPOINT probe`.execute(trx);
    try {
      await query(trx);
    } catch (err) {
      caught = err;
      await sql`ROLLBACK TO SAVEPOINT probe`.execute(trx);
    }
  });
  if (caught === undefined) throw new Error('expected the statement to fail');
  return caught;
}

function validation(error: unknown, names?: ConstraintDescriptions): string {
  const translated = translateDatabaseError(error, names);
  expect(translated, String(error)).toBeInstanceOf(ValidationError);
  expect((translated as ValidationError).status).toBe(400);
  expect((translated as Error).cause).toBe(error); // kept for the logs
  return (translated as ValidationError).message;
}

/** The integrity checks both engines must pass; `restrictCode` is how each reports a RESTRICT key. */
function integrityClass(engine: string, database: () => Kysely<any>, restrictCode: string) {
  describe(`integrity errors (class 23) on ${engine}`, () => {
    it('23505 unique: names the table and the field(s), never the values', async () => {
      const one = await failure(database(), (trx) => sql`INSERT INTO ff_owner (name, code) VALUES ('Cy', 'A1')`.execute(trx));
      expect(sqlState(one)).toBe('23505');
      expect(validation(one)).toBe(`Table "ff_owner": 'code' must be unique; this value cannot be used`);
      expect(validation(one, MODEL_NAMES)).toBe(`Owner: 'code' must be unique; this value cannot be used`);
      const pair = await failure(database(), (trx) => sql`INSERT INTO ff_owner (name, region, city) VALUES ('Cy', 'north', 'York')`.execute(trx));
      expect(validation(pair, MODEL_NAMES)).toBe(`Owner: the combination of 'region', 'city' must be unique; these values cannot be used`);
      expect(validation(pair)).not.toContain('York');
    });

    it('23502 not null: names the field and the model', async () => {
      const error = await failure(database(), (trx) => sql`INSERT INTO ff_owner (name) VALUES (NULL)`.execute(trx));
      expect(sqlState(error)).toBe('23502');
      expect(validation(error, MODEL_NAMES)).toBe(`Field 'name' of Owner is required`);
      expect(validation(error)).toBe(`Field 'name' of Table "ff_owner" is required`);
    });

    it('a violation of one field carries that field and its model as data, never only in its text', async () => {
      const required = await failure(database(), (trx) => sql`INSERT INTO ff_owner (name) VALUES (NULL)`.execute(trx));
      expect(refusedAbout(required)).toEqual({ field: 'name', model: 'Owner' });
      const link = await failure(database(), (trx) => sql`INSERT INTO ff_pet (owner_id) VALUES (999)`.execute(trx));
      expect(refusedAbout(link)).toEqual({ field: 'owner', model: 'Pet' });
      const unique = await failure(database(), (trx) => sql`INSERT INTO ff_owner (name, code) VALUES ('Cy', 'A1')`.execute(trx));
      expect(refusedAbout(unique)).toEqual({ field: 'code', model: 'Owner' });
      expect((translateDatabaseError(unique, OWNED_NAMES) as Error).message).toBe('Owner codes are unique');
      const pair = await failure(database(), (trx) => sql`INSERT INTO ff_owner (name, region, city) VALUES ('Cy', 'north', 'York')`.execute(trx));
      expect(refusedAbout(pair)).toEqual({ field: undefined, model: undefined }); // two fields: none is the one
    });

    it('23503 a link to a missing record: names the field', async () => {
      const error = await failure(database(), (trx) => sql`INSERT INTO ff_pet (owner_id) VALUES (999)`.execute(trx));
      expect(sqlState(error)).toBe('23503');
      // With the registry's names: worded as a link to a hidden record is (reference-checks.ts).
      expect(validation(error, MODEL_NAMES)).toBe(`Field 'owner': Owner 999 does not exist`);
      expect(validation(error)).toBe(`The record referenced by 'owner' does not exist`); // the column, less its _id
    });

    it(`${restrictCode} deleting a record still referenced through an on_delete RESTRICT key`, async () => {
      const error = await failure(database(), (trx) => sql`DELETE FROM ff_owner WHERE id = 1`.execute(trx));
      expect(sqlState(error)).toBe(restrictCode);
      expect(validation(error, MODEL_NAMES)).toBe(
        `Cannot delete or change this record: Pet records still refer to it through 'owner' (on_delete RESTRICT)`,
      );
      expect(validation(error)).toBe(
        `Cannot delete or change this record: Table "ff_pet" records still refer to it through the key 'ff_pet_owner_id_fkey' (on_delete RESTRICT)`,
      );
    });

    it('23514 check: names the model and the rule', async () => {
      const error = await failure(database(), (trx) => sql`UPDATE ff_owner SET score = -1 WHERE id = 2`.execute(trx));
      expect(sqlState(error)).toBe('23514');
      expect(validation(error, MODEL_NAMES)).toBe(`Owner: the values break the rule 'ff_owner_score_check' (a check constraint)`);
    });

    it('23P01 exclusion: names the model, the fields and the constraint', async () => {
      const error = await failure(database(), (trx) => sql`INSERT INTO ff_booking (span) VALUES ('[3,7)')`.execute(trx));
      expect(sqlState(error)).toBe('23P01');
      expect(validation(error, MODEL_NAMES)).toBe(`Booking: the values of 'span' cannot be used: they break the exclusion constraint 'ff_booking_span_excl'`);
    });

    it('every code of the class, as PL/pgSQL raises it, is a ValidationError naming the constraint (23000 and 23001 included)', async () => {
      for (const code of ['23000', '23001', '23502', '23503', '23505', '23514', '23P01']) {
        const error = await failure(database(), (trx) => sql.raw(`DO $$ BEGIN
          RAISE EXCEPTION 'broken' USING ERRCODE = '${code}', TABLE = 'ff_owner', COLUMN = 'name', CONSTRAINT = 'ff_rule_${code.toLowerCase()}';
        END $$`).execute(trx));
        expect(sqlState(error)).toBe(code);
        const message = validation(error, MODEL_NAMES);
        expect(message, code).toMatch(/Owner|'name'|ff_rule/);
        expect(validation(error)).toMatch(/ff_owner|'name'|ff_rule/);
      }
    });

    it('the model layer translates only what the data caused, and leaves the server conditions raw', async () => {
      const unique = await failure(database(), (trx) => sql`INSERT INTO ff_owner (name, code) VALUES ('Cy', 'A1')`.execute(trx));
      expect(translateDataError(unique, MODEL_NAMES)).toBeInstanceOf(ValidationError);
      const tooLong = await failure(database(), (trx) => sql`INSERT INTO ff_owner (name) VALUES (${'x'.repeat(30)})`.execute(trx));
      expect((translateDataError(tooLong, MODEL_NAMES) as Error).message).toBe('A value is too long for its field');
      const deadlockLike = await failure(database(), (trx) => sql`DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '40P01'; END $$`.execute(trx));
      expect(translateDataError(deadlockLike, MODEL_NAMES)).toBe(deadlockLike);
      expect(translateDatabaseError(deadlockLike)).toBeInstanceOf(DatabaseBusy);
    });
  });
}

describe('PostgreSQL server', () => {
  const name = `t_${randomBytes(4).toString('hex')}_errors`;
  let engine: PostgresEngine;
  let db: Kysely<any>;
  beforeAll(async () => {
    engine = new PostgresEngine({ url: TEST_DATABASE_URL });
    await engine.create(name);
    db = (await engine.open(name)).executor as Kysely<any>; // the engine's Kysely (setIsolationLevel below)
    await sql.raw(SCHEMA).execute(db);
  });
  afterAll(async () => {
    await engine?.drop(name).catch(() => {});
    await engine?.close();
  });

  integrityClass('the PostgreSQL server', () => db, '23503');

  /** Runs two pieces of work at once, each transaction on its own connection of the engine's pool. */
  async function twoConnections(work: (a: Kysely<any>) => Promise<unknown>, other: (b: Kysely<any>) => Promise<unknown>) {
    return Promise.allSettled([work(db), other(db)]);
  }

  it('57014 statement timeout → 503 StatementTimeout naming FF_STATEMENT_TIMEOUT, without Retry-After', async () => {
    const error = await failure(db, async (trx) => {
      await sql`SET LOCAL statement_timeout = 50`.execute(trx);
      await sql`SELECT pg_sleep(5)`.execute(trx);
    });
    expect(sqlState(error)).toBe('57014');
    const translated = translateDatabaseError(error) as StatementTimeout;
    expect(translated).toBeInstanceOf(StatementTimeout);
    expect(translated.status).toBe(503);
    expect(translated.message).toContain('FF_STATEMENT_TIMEOUT');
    expect(translated.headers).toEqual({});
  });

  it('55P03 lock timeout → 503 DatabaseBusy with Retry-After: 5 naming FF_LOCK_TIMEOUT', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const [, waiter] = await twoConnections(
      (a) => a.transaction().execute(async (trx) => {
        await sql`LOCK TABLE ff_owner IN ACCESS EXCLUSIVE MODE`.execute(trx);
        locked();
        await held;
      }),
      async (b) => {
        await isLocked;
        try {
          return await b.transaction().execute(async (trx) => {
            await sql`SET LOCAL lock_timeout = 100`.execute(trx);
            return sql`SELECT * FROM ff_owner`.execute(trx);
          });
        } finally {
          release();
        }
      },
    );
    expect(waiter.status).toBe('rejected');
    const error = (waiter as PromiseRejectedResult).reason;
    expect(sqlState(error)).toBe('55P03');
    const translated = translateDatabaseError(error) as DatabaseBusy;
    expect(translated).toBeInstanceOf(DatabaseBusy);
    expect([translated.status, translated.headers]).toEqual([503, { 'Retry-After': '5' }]);
    expect(translated.message).toContain('FF_LOCK_TIMEOUT');
  });

  it('40P01 deadlock and 40001 serialization failure → 503 DatabaseBusy (retry)', async () => {
    let bothLocked = 0;
    let proceed!: () => void;
    const go = new Promise<void>((resolve) => (proceed = resolve));
    const lockThen = (first: number, second: number) => (k: Kysely<any>) => k.transaction().execute(async (trx) => {
      await sql`UPDATE ff_owner SET score = score + 1 WHERE id = ${first}`.execute(trx);
      if (++bothLocked === 2) proceed();
      await go;
      await sql`UPDATE ff_owner SET score = score + 1 WHERE id = ${second}`.execute(trx);
    });
    const outcomes = await twoConnections(lockThen(1, 2), lockThen(2, 1));
    const victims = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(victims).toHaveLength(1);
    expect(sqlState(victims[0]!.reason)).toBe('40P01');
    expect(translateDatabaseError(victims[0]!.reason)).toBeInstanceOf(DatabaseBusy);

    // Write skew under SERIALIZABLE: each reads what the other writes.
    let bothRead = 0;
    let write!: () => void;
    const writeNow = new Promise<void>((resolve) => (write = resolve));
    const skew = (id: number) => (k: Kysely<any>) => k.transaction().setIsolationLevel('serializable').execute(async (trx) => {
      await sql`SELECT sum(score) FROM ff_owner`.execute(trx);
      if (++bothRead === 2) write();
      await writeNow;
      await sql`UPDATE ff_owner SET score = score + 1 WHERE id = ${id}`.execute(trx);
    });
    const serial = await twoConnections(skew(1), skew(2));
    const loser = serial.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(sqlState(loser?.reason)).toBe('40001');
    expect(translateDatabaseError(loser!.reason)).toBeInstanceOf(DatabaseBusy);
  });

  it('a connection killed mid-statement (57P01) and a refused connection → 503 DatabaseUnavailable with Retry-After', async () => {
    const victim = new pg.Client({ connectionString: rawUrl(name) });
    await victim.connect();
    victim.on('error', () => {}); // the socket's end after the FATAL message
    const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const sleeping = victim.query('SELECT pg_sleep(5)').catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sql`SELECT pg_terminate_backend(${pid})`.execute(db);
    const killed = await sleeping;
    expect(sqlState(killed)).toBe('57P01');
    for (const translated of [translateDatabaseError(killed), connectionFailure(killed)]) {
      expect(translated).toBeInstanceOf(DatabaseUnavailable);
      expect((translated as DatabaseUnavailable).headers).toEqual({ 'Retry-After': '5' });
    }
    await victim.end().catch(() => {});

    // Nothing listens on port 1: the socket error carries no SQLSTATE, so only the engine (whose
    // connection it is) may call it DatabaseUnavailable; the generic translation leaves it alone.
    const refusedClient = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' });
    const refused = await refusedClient.connect().catch((err: unknown) => err);
    expect((refused as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(connectionFailure(refused)).toBeInstanceOf(DatabaseUnavailable);
    expect(translateDatabaseError(refused)).toBe(refused);
    const down = new PostgresEngine({ url: 'postgres://postgres@127.0.0.1:1/postgres' });
    try {
      await expect(down.list()).rejects.toBeInstanceOf(DatabaseUnavailable);
      await expect(down.open('anything')).rejects.toBeInstanceOf(DatabaseUnavailable);
    } finally {
      await down.close();
    }
  });

  it('3D000 connecting to a database that does not exist → 404 DatabaseNotFound', async () => {
    const client = new pg.Client({ connectionString: rawUrl(`${name}_missing`) });
    const error = await client.connect().catch((err: unknown) => err);
    expect(sqlState(error)).toBe('3D000');
    const translated = translateDatabaseError(error) as FieldForgeError;
    expect([translated.status, translated.name]).toEqual([404, 'DatabaseNotFound']);
    expect(translated).toBeInstanceOf(DatabaseNotFound);
  });

  it('anything else is left as it is: a bug stays a 500', async () => {
    const syntax = await failure(db, (trx) => sql`SELEC 1`.execute(trx));
    expect(sqlState(syntax)).toBe('42601');
    expect(translateDatabaseError(syntax)).toBe(syntax);
    const plain = new Error('Connection terminated unexpectedly'); // not from the engine's own connection
    expect(translateDatabaseError(plain)).toBe(plain);
    const ours = new ValidationError('already translated');
    expect(translateDatabaseError(ours)).toBe(ours);
  });
});

describe('PGlite (PostgreSQL 18)', () => {
  let pglite: PGlite;
  let db: Kysely<any>;
  beforeAll(async () => {
    pglite = await PGlite.create(); // in memory: this file needs no data directory
    db = new Kysely<any>({ dialect: new PGliteDialect(pglite) });
    expect((await sql<{ v: string }>`SELECT current_setting('server_version_num') AS v`.execute(db)).rows[0]!.v >= '180000').toBe(true);
    await pglite.exec(SCHEMA);
  });
  afterAll(async () => {
    await db?.destroy();
  });

  integrityClass('PGlite', () => db, '23001');
});

/** A raw-client URL for `database` on the test server. */
function rawUrl(database: string): string {
  const url = new URL(TEST_DATABASE_URL);
  if (!url.username) url.username = 'postgres';
  url.pathname = `/${database}`;
  return url.href;
}
