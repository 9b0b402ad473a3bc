/**
 * PostgresEngine against the local PostgreSQL server. Every database is named `t_<random>_…` and
 * dropped in afterAll, raw (so cleanup works even when the engine under test is broken).
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TenantDatabase } from '../../src/db/engine.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { BadRequest, DatabaseBusy, DatabaseNotFound, ValidationError } from '../../src/errors.js';

// No user in the URL on purpose: the engine must default to `postgres`, not $USER.
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres';
const POOL_MAX = 3;
const prefix = `t_${randomBytes(4).toString('hex')}_`;
const names = {
  a: `${prefix}a`,
  b: `${prefix}b`,
  c: `${prefix}c`,
  d: `${prefix}d`,
  unmarked: `${prefix}unmarked`,
};

/** A raw-client URL for `database` (pg lets an empty URL user override an explicit `user`). */
function rawUrl(database?: string): string {
  const url = new URL(DATABASE_URL);
  if (!url.username) url.username = 'postgres';
  if (database) url.pathname = `/${database}`;
  return url.href;
}

let engine: PostgresEngine;
let admin: pg.Client;

/** The engine's handle as the Kysely instance it is inside src/db, for its query builder (engine internals under test). */
const builder = (db: TenantDatabase) => db.executor as Kysely<any>;

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await fn();
  } finally {
    console.log(`[postgres] ${label}: ${(performance.now() - start).toFixed(0)} ms`);
  }
}

async function rows(name: string): Promise<number[]> {
  const db = await engine.open(name);
  const result = await sql<{ id: number }>`SELECT id FROM items ORDER BY id`.execute(db.executor);
  return result.rows.map((r) => r.id);
}

beforeAll(async () => {
  engine = new PostgresEngine({ url: DATABASE_URL, poolMax: POOL_MAX, maxOpenDatabases: 2 });
  admin = new pg.Client({ connectionString: rawUrl() });
  await admin.connect();
});

afterAll(async () => {
  await engine?.close();
  for (const name of Object.values(names)) {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
  await admin?.end();
});

describe('PostgresEngine', () => {
  it('creates, lists and reports existence', async () => {
    await timed('create', () => engine.create(names.a));
    expect(await engine.list()).toContain(names.a);
    expect(await engine.exists(names.a)).toBe(true);
    expect(await engine.exists(names.b)).toBe(false);
    const listed = await engine.list();
    expect([...listed].sort()).toEqual(listed);
    expect(listed).not.toContain('postgres');
    expect(listed).not.toContain('template1');
  });

  it('refuses to create an existing database', async () => {
    await expect(engine.create(names.a)).rejects.toThrow(ValidationError);
    await expect(engine.create(names.a)).rejects.toThrow(/already exists/);
  });

  it('refuses invalid names before touching the server', async () => {
    for (const bad of ['a"; DROP DATABASE x; --', '../etc', 'Acme', 'postgres', 'pg_x', 'x'.repeat(64)]) {
      await expect(engine.create(bad)).rejects.toThrow(BadRequest);
      await expect(engine.open(bad)).rejects.toThrow(BadRequest);
      await expect(engine.drop(bad)).rejects.toThrow(BadRequest);
      await expect(engine.clone(names.a, bad)).rejects.toThrow(BadRequest);
      await expect(engine.exists(bad)).rejects.toThrow(BadRequest);
    }
  });

  it('opens unknown databases as DatabaseNotFound', async () => {
    await expect(engine.open(`${prefix}nope`)).rejects.toThrow(DatabaseNotFound);
    await expect(engine.drop(`${prefix}nope`)).rejects.toThrow(DatabaseNotFound);
    await expect(engine.clone(`${prefix}nope`, names.d)).rejects.toThrow(DatabaseNotFound);
    expect(engine.openDatabases).not.toContain(`${prefix}nope`);
  });

  it('shares one pool between concurrent opens', async () => {
    const [x, y] = await Promise.all([engine.open(names.a), engine.open(names.a)]);
    expect(x).toBe(y);
    expect(x.name).toBe(names.a);
  });

  it('counts statements, including transaction control, and notifies listeners', async () => {
    const db = await engine.open(names.a);
    const seen: string[] = [];
    const unsubscribe = db.onStatement((s) => seen.push(s));
    const before = db.statementCount;
    await sql`CREATE TABLE items (id int PRIMARY KEY)`.execute(db.executor);
    expect(db.statementCount).toBe(before + 1);
    await builder(db).transaction().execute(async (trx) => {
      await trx.insertInto('items').values([{ id: 1 }, { id: 2 }]).execute();
    });
    expect(db.statementCount).toBe(before + 4); // begin, insert, commit
    await expect(sql`SELECT * FROM no_such_table`.execute(db.executor)).rejects.toThrow();
    expect(db.statementCount).toBe(before + 5); // failed statements were still sent
    unsubscribe();
    await sql`SELECT 1`.execute(db.executor);
    expect(db.statementCount).toBe(before + 6);
    expect(seen).toHaveLength(5);
    expect(seen[0]).toMatch(/CREATE TABLE items/);
    expect(seen.slice(1, 4).map((s) => s.split(' ')[0])).toEqual(['begin', 'insert', 'commit']);
  });

  it('bounds the pool: 3×poolMax concurrent queries never use more than poolMax backends', async () => {
    const db = await engine.open(names.a);
    let maxBackends = 0;
    let maxPool = 0;
    let running = true;
    const sampler = (async () => {
      while (running) {
        const { rows: r } = await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'fieldforge'`,
          [names.a],
        );
        maxBackends = Math.max(maxBackends, r[0]!.n);
        maxPool = Math.max(maxPool, (await engine.poolSize(names.a)) ?? 0);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    await Promise.all(
      Array.from({ length: 3 * POOL_MAX }, () => sql`SELECT pg_sleep(0.1)`.execute(db.executor)),
    );
    running = false;
    await sampler;
    expect(maxBackends).toBeGreaterThan(0);
    expect(maxBackends).toBeLessThanOrEqual(POOL_MAX);
    expect(maxPool).toBe(POOL_MAX);
  });

  it('clones schema and data into an independent database', async () => {
    await engine.open(names.a);
    expect(engine.openDatabases).toContain(names.a);
    await timed('clone (small db)', () => engine.clone(names.a, names.b));
    expect(engine.openDatabases).not.toContain(names.a); // the template's pool had to go
    expect(await engine.list()).toEqual(expect.arrayContaining([names.a, names.b]));
    expect(await rows(names.b)).toEqual([1, 2]);

    const b = await engine.open(names.b);
    await builder(b).insertInto('items').values({ id: 3 }).execute();
    const a = await engine.open(names.a);
    await builder(a).deleteFrom('items').where('id', '=', 1).execute();
    expect(await rows(names.a)).toEqual([2]);
    expect(await rows(names.b)).toEqual([1, 2, 3]);
  });

  it('refuses to clone onto an existing database, leaving the source pool alone', async () => {
    const a = await engine.open(names.a);
    await expect(engine.clone(names.a, names.b)).rejects.toThrow(ValidationError);
    await expect(engine.clone(names.a, 'postgres')).rejects.toThrow(BadRequest);
    expect(await engine.open(names.a)).toBe(a);
  });

  it('closes the least recently used pool beyond maxOpenDatabases', async () => {
    await engine.closeDatabase(names.a);
    await engine.closeDatabase(names.b);
    await engine.create(names.c);
    const a = await engine.open(names.a);
    await engine.open(names.b);
    expect(await engine.open(names.a)).toBe(a); // a is now the most recently used
    await engine.open(names.c);
    expect(engine.openDatabases).toEqual([names.a, names.c]);
    // b's pool was really ended: no backend of ours stays on it.
    await expect.poll(() => engine.poolSize(names.b)).toBeUndefined();
    const reopened = await engine.open(names.b);
    expect(await rows(names.b)).toEqual([1, 2, 3]);
    expect(reopened.statementCount).toBe(1); // a fresh handle
  });

  it('clones a database that another FieldForge process has idle connections to', async () => {
    const other = new PostgresEngine({ url: DATABASE_URL, poolMax: 2 });
    try {
      const otherDb = await other.open(names.c);
      await sql`SELECT 1`.execute(otherDb.executor); // leaves an idle connection on c
      await timed('clone (source had idle sessions)', () => engine.clone(names.c, names.d));
      expect(await engine.exists(names.d)).toBe(true);
      // The other process's pool survives losing its idle connection.
      const { rows: r } = await sql<{ one: number }>`SELECT 1 AS one`.execute(otherDb.executor);
      expect(r).toEqual([{ one: 1 }]);
    } finally {
      await other.close();
    }
  });

  it('refuses to clone while a foreign session is connected to the source, with a clear error', async () => {
    const foreign = new pg.Client({ connectionString: rawUrl(names.c), application_name: 'someone_else' });
    foreign.on('error', () => {});
    await foreign.connect();
    try {
      const error = await engine.clone(names.c, `${prefix}never`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseBusy);
      expect((error as Error).message).toMatch(/Cannot clone database "t_\w+_c": 1 other session\(s\) are connected/);
      expect(await engine.exists(`${prefix}never`)).toBe(false);
    } finally {
      await foreign.end();
    }
  });

  it('never lists or touches databases without the FieldForge marker', async () => {
    await admin.query(`CREATE DATABASE "${names.unmarked}"`);
    try {
      expect(await engine.list()).not.toContain(names.unmarked);
      expect(await engine.exists(names.unmarked)).toBe(false);
      await expect(engine.open(names.unmarked)).rejects.toThrow(DatabaseNotFound);
      await expect(engine.drop(names.unmarked)).rejects.toThrow(DatabaseNotFound);
      await expect(engine.clone(names.unmarked, `${prefix}never`)).rejects.toThrow(DatabaseNotFound);
      await expect(engine.create(names.unmarked)).rejects.toThrow(ValidationError);
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [names.unmarked]);
      expect(rowCount).toBe(1);
      // A pre-existing commented database (postgres) is never ours either.
      expect(await engine.list()).not.toContain('postgres');
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${names.unmarked}" WITH (FORCE)`);
    }
  });

  it('drop closes the pool and removes the database, even with sessions open elsewhere', async () => {
    const c = await engine.open(names.c);
    await sql`SELECT 1`.execute(c.executor);
    const other = new PostgresEngine({ url: DATABASE_URL });
    try {
      await sql`SELECT 1`.execute((await other.open(names.c)).executor);
      await timed('drop', () => engine.drop(names.c));
    } finally {
      await other.close();
    }
    expect(engine.openDatabases).not.toContain(names.c);
    expect(await engine.list()).not.toContain(names.c);
    expect(await engine.exists(names.c)).toBe(false);
    await expect(engine.open(names.c)).rejects.toThrow(DatabaseNotFound);
    await expect(engine.drop(names.c)).rejects.toThrow(DatabaseNotFound);
    // The name is free again.
    await engine.create(names.c);
    expect(await engine.exists(names.c)).toBe(true);
    await engine.drop(names.c);
  });

  it('close() ends every pool', async () => {
    const e = new PostgresEngine({ url: DATABASE_URL });
    await sql`SELECT 1`.execute((await e.open(names.a)).executor);
    await e.close();
    expect(e.openDatabases).toEqual([]);
  });
});
