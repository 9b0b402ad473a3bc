/**
 * PgliteEngine in a temporary directory. PGlite's initdb takes seconds, so the whole file shares two
 * databases (`a` created, `b` cloned) and runs its steps in order.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TenantDatabase } from '../../src/db/engine.js';
import { PgliteEngine } from '../../src/db/pglite-engine.js';
import { BadRequest, DatabaseBusy, DatabaseNotFound, ValidationError } from '../../src/errors.js';

let tmp: string;
let dataDir: string;
let engine: PgliteEngine;
/** A second engine on the same directory: stands in for another process. */
let other: PgliteEngine;

const lockFile = (name: string) => path.join(dataDir, 'databases', `${name}.lock`);
const fileExists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  );

/** The engine's handle as the Kysely instance it is inside src/db, for its query builder (engine internals under test). */
const builder = (db: TenantDatabase) => db.executor as Kysely<any>;

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  try {
    return await fn();
  } finally {
    console.log(`[pglite] ${label}: ${(performance.now() - start).toFixed(0)} ms`);
  }
}

async function ids(e: PgliteEngine, name: string): Promise<number[]> {
  const db = await e.open(name);
  const { rows } = await sql<{ id: number }>`SELECT id FROM items ORDER BY id`.execute(db.executor);
  return rows.map((r) => r.id);
}

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'fieldforge-pglite-'));
  dataDir = path.join(tmp, 'data');
  engine = new PgliteEngine({ dataDir });
  other = new PgliteEngine({ dataDir });
});

afterAll(async () => {
  await engine?.close();
  await other?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

describe('PgliteEngine', () => {
  it('lists nothing before the first database', async () => {
    expect(await engine.list()).toEqual([]);
  });

  it('creates, lists and reports existence', async () => {
    await timed('create', () => engine.create('a'));
    expect(await engine.list()).toEqual(['a']);
    expect(await engine.exists('a')).toBe(true);
    expect(await engine.exists('b')).toBe(false);
    expect(engine.openDatabases).toEqual([]); // create does not keep it open
    expect(await fileExists(lockFile('a'))).toBe(false);
    await expect(engine.create('a')).rejects.toThrow(ValidationError);
  });

  it('refuses invalid names without touching the file system', async () => {
    for (const bad of ['../etc', '../../x', 'a/b', '.hidden', 'A', 'a"; DROP DATABASE x; --', 'pg_x']) {
      await expect(engine.create(bad)).rejects.toThrow(BadRequest);
      await expect(engine.open(bad)).rejects.toThrow(BadRequest);
      await expect(engine.drop(bad)).rejects.toThrow(BadRequest);
      await expect(engine.clone('a', bad)).rejects.toThrow(BadRequest);
    }
    expect(await fs.readdir(tmp)).toEqual(['data']);
    expect(await fs.readdir(path.join(dataDir, 'databases'))).toEqual(['a']);
  });

  it('reports unknown databases as DatabaseNotFound', async () => {
    await expect(engine.open('nope')).rejects.toThrow(DatabaseNotFound);
    await expect(engine.drop('nope')).rejects.toThrow(DatabaseNotFound);
    await expect(engine.clone('nope', 'b')).rejects.toThrow(DatabaseNotFound);
    expect(engine.openDatabases).toEqual([]);
  });

  it('opens once, holds a lock file with our pid, and counts statements', async () => {
    const [db, same] = await timed('open', () => Promise.all([engine.open('a'), engine.open('a')]));
    expect(db).toBe(same);
    expect(await fs.readFile(lockFile('a'), 'utf8')).toBe(String(process.pid));

    const seen: string[] = [];
    const unsubscribe = db.onStatement((s) => seen.push(s));
    await sql`CREATE TABLE items (id int PRIMARY KEY)`.execute(db.executor);
    await builder(db).transaction().execute((trx) => trx.insertInto('items').values([{ id: 1 }, { id: 2 }]).execute());
    unsubscribe();
    await sql`SELECT 1`.execute(db.executor);
    expect(db.statementCount).toBe(5);
    expect(seen.map((s) => s.split(' ')[0])).toEqual(['CREATE', 'begin', 'insert', 'commit']);
  });

  it('never interleaves concurrent transactions on the single PGlite connection', async () => {
    const db = await engine.open('a');
    const log: string[] = [];
    const unsubscribe = db.onStatement((s) => log.push(s));
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    const failing = builder(db).transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 100 }).execute();
      await pause(30); // give the others every chance to slip in
      await trx.insertInto('items').values({ id: 101 }).execute();
      throw new Error('roll me back');
    });
    const succeeding = builder(db).transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 200 }).execute();
      await pause(10);
      await trx.insertInto('items').values({ id: 201 }).execute();
    });
    // A plain query issued while both transactions are pending must not run inside either of them.
    const outside = sql<{ id: number }>`SELECT id FROM items WHERE id >= 100 ORDER BY id`.execute(db.executor);

    const [failed, succeeded, seen] = await Promise.allSettled([failing, succeeding, outside]);
    unsubscribe();
    expect(failed.status).toBe('rejected');
    expect(succeeded.status).toBe('fulfilled');
    expect(await ids(engine, 'a')).toEqual([1, 2, 200, 201]);
    // The outside query saw a committed state: nothing of the rolled-back transaction, all or none of the other.
    const outsideIds = seen.status === 'fulfilled' ? seen.value.rows.map((r) => r.id) : undefined;
    expect([[], [200, 201]]).toContainEqual(outsideIds);

    // Statement log: each begin…commit/rollback block is contiguous.
    const blocks: string[][] = [];
    let current: string[] | undefined;
    for (const statement of log) {
      const verb = statement.split(' ')[0]!;
      if (verb === 'begin') current = [];
      if (current) current.push(statement);
      else blocks.push([statement]);
      if (verb === 'commit' || verb === 'rollback') {
        blocks.push(current!);
        current = undefined;
      }
    }
    const transactions = blocks.filter((b) => b[0] === 'begin');
    expect(transactions).toHaveLength(2);
    for (const block of transactions) {
      expect(block).toHaveLength(4); // begin, insert, insert, commit|rollback — nothing foreign inside
    }
  });

  it('refuses a second engine instance (another process) while the database is open', async () => {
    const error = await other.open('a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseBusy);
    expect((error as Error).message).toMatch(new RegExp(`Database "a" is in use by process ${process.pid}`));
    await expect(other.drop('a')).rejects.toThrow(DatabaseBusy);
    await expect(other.clone('a', 'b')).rejects.toThrow(DatabaseBusy);
    expect(await other.exists('b')).toBe(false);
    expect(other.openDatabases).toEqual([]);
  });

  it('takes over a stale lock left by a dead process', async () => {
    await engine.closeDatabase('a');
    expect(await fileExists(lockFile('a'))).toBe(false);
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    await fs.writeFile(lockFile('a'), String(dead));

    expect(await ids(other, 'a')).toEqual([1, 2, 200, 201]);
    expect(await fs.readFile(lockFile('a'), 'utf8')).toBe(String(process.pid));
    await other.closeDatabase('a');
    expect(await fileExists(lockFile('a'))).toBe(false);
  });

  it('clones into an independent database, closing the open source first', async () => {
    await engine.open('a');
    await timed('clone', () => engine.clone('a', 'b'));
    expect(engine.openDatabases).toEqual([]);
    expect(await engine.list()).toEqual(['a', 'b']);
    expect(await fs.readdir(path.join(dataDir, 'databases'))).toEqual(['a', 'b']); // no leftovers
    expect(await ids(engine, 'b')).toEqual([1, 2, 200, 201]);

    await builder(await engine.open('b')).insertInto('items').values({ id: 3 }).execute();
    await builder(await engine.open('a')).deleteFrom('items').where('id', '=', 1).execute();
    expect(await ids(engine, 'a')).toEqual([2, 200, 201]);
    expect(await ids(engine, 'b')).toEqual([1, 2, 3, 200, 201]);
    const a = await engine.open('a');
    await expect(engine.clone('a', 'b')).rejects.toThrow(ValidationError);
    expect(await engine.open('a')).toBe(a); // a doomed clone leaves the source open
  });

  it('refuses to clone a database another process has open', async () => {
    await engine.closeDatabase('b');
    await other.open('b');
    await expect(engine.clone('b', 'c')).rejects.toThrow(/Database "b" is in use by process/);
    expect(await engine.exists('c')).toBe(false);
    await other.closeDatabase('b');
  });

  it('drop closes the database and removes its directory and lock', async () => {
    await engine.open('b');
    await timed('drop', () => engine.drop('b'));
    expect(engine.openDatabases).toEqual(['a']);
    expect(await engine.list()).toEqual(['a']);
    expect(await fileExists(lockFile('b'))).toBe(false);
    expect(await fs.readdir(path.join(dataDir, 'databases'))).toEqual(['a', 'a.lock']);
    await expect(engine.open('b')).rejects.toThrow(DatabaseNotFound);
    await expect(engine.drop('b')).rejects.toThrow(DatabaseNotFound);
  });

  it('close() closes everything and releases every lock', async () => {
    await engine.close();
    expect(engine.openDatabases).toEqual([]);
    expect(await fileExists(lockFile('a'))).toBe(false);
    expect(await ids(engine, 'a')).toEqual([2, 200, 201]); // reopening works after close
    await engine.closeDatabase('a');
  });
});
