/**
 * The embedded engine: each FieldForge database is a PGlite (WASM PostgreSQL) data directory
 * `<dataDir>/databases/<name>/`, so no server is needed.
 *
 * PGlite does not lock its data directory and two instances on one directory corrupt it, so every
 * instance we start holds a lock file `<dir>.lock` containing our pid; the same lock guards clone
 * (copying a live directory gives a torn copy) and drop.
 *
 * Concurrency inside one database: PGlite is a single connection. kysely-pglite-dialect's driver
 * hands that connection to one Kysely "connection" at a time and queues the rest until release, and
 * Kysely holds the connection for a whole transaction — so concurrent transactions never interleave
 * and plain queries wait for an open transaction (checked by test/db/pglite-engine.test.ts). Hence
 * no mutex of our own. Consequence: inside `transaction().execute(trx => …)` use `trx`; a query on
 * the outer `kysely` waits for the transaction to end, i.e. forever.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { pgliteParsers } from './type-parsers.js';
import { Kysely } from 'kysely';
import type { PGliteDialect } from 'kysely-pglite-dialect';
import { DatabaseBusy, DatabaseNotFound, ValidationError } from '../errors.js';
import { LazyModule } from '../lazy-module.js';
import { assertValidDatabaseName, isValidDatabaseName } from './database-name.js';
import type { DatabaseGoneListener, Engine, StatementListener, TenantDatabase } from './engine.js';
import { StatementCounter } from './statement-counter.js';

export interface PgliteEngineOptions {
  /** Root directory; databases live in `<dataDir>/databases/`. */
  dataDir: string;
  /**
   * `statement_timeout` / `lock_timeout` set on each opened database, milliseconds (unset or 0: no
   * limit). Set for parity with the server; PGlite runs a statement synchronously, without the
   * timer interrupts that enforce them, so a long statement is not cancelled (see decisions).
   */
  statementTimeoutMs?: number;
  lockTimeoutMs?: number;
}

/**
 * PGlite and its Kysely dialect, loaded when the engine first creates or opens a database: ~18 ms
 * and ~4.5 MiB of the start, which `create-engine.ts` (importing this file) would cost a server
 * on PostgreSQL too. Imported once; a failed import rejects with its own error.
 */
const pgliteModules = new LazyModule(() => Promise.all([import('@electric-sql/pglite'), import('kysely-pglite-dialect')])
  .then(([{ PGlite }, { PGliteDialect }]) => ({ PGlite, PGliteDialect })));

/** An open database: one PGlite instance (and its lock) behind a Kysely instance that counts statements. */
class PgliteDatabase implements TenantDatabase {
  readonly executor: Kysely<any>;
  readonly #counter = new StatementCounter();

  constructor(
    readonly name: string,
    private readonly pglite: PGlite,
    private readonly lock: FileLock,
    Dialect: typeof PGliteDialect,
  ) {
    this.executor = new Kysely<any>({ dialect: new Dialect(pglite), log: this.#counter.logger });
  }

  transaction<T>(fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    return this.executor.transaction().execute(fn);
  }

  get statementCount(): number {
    return this.#counter.count;
  }

  onStatement(listener: StatementListener): () => void {
    return this.#counter.on(listener);
  }

  async close(): Promise<void> {
    try {
      await this.executor.destroy();
      // Kysely only closes the driver if it was ever used; close PGlite ourselves otherwise.
      if (!this.pglite.closed) await this.pglite.close();
    } finally {
      await this.lock.release();
    }
  }
}

export class PgliteEngine implements Engine {
  readonly kind = 'pglite' as const;
  readonly #root: string;
  readonly #open = new Map<string, Promise<PgliteDatabase>>();
  readonly #settings: string;
  readonly #goneListeners = new Set<DatabaseGoneListener>();

  constructor(options: PgliteEngineOptions) {
    this.#root = path.resolve(options.dataDir, 'databases');
    const timeouts = [['statement_timeout', options.statementTimeoutMs], ['lock_timeout', options.lockTimeoutMs]] as const;
    this.#settings = timeouts
      .filter(([, ms]) => ms !== undefined && Number.isFinite(ms) && ms > 0)
      .map(([setting, ms]) => `SET ${setting} = ${Math.round(ms!)};`)
      .join(' ');
  }

  onDatabaseGone(listener: DatabaseGoneListener): () => void {
    this.#goneListeners.add(listener);
    return () => this.#goneListeners.delete(listener);
  }

  /** Names of the databases currently open in this engine (tests, ops). */
  get openDatabases(): string[] {
    return [...this.#open.keys()];
  }

  async list(): Promise<string[]> {
    let entries;
    try {
      entries = await fs.readdir(this.#root, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw error;
    }
    // Lock files and half-built `.staging-*` / `.dropping-*` directories never have valid names.
    return entries
      .filter((e) => e.isDirectory() && isValidDatabaseName(e.name))
      .map((e) => e.name)
      .sort();
  }

  async exists(name: string): Promise<boolean> {
    return this.#exists(assertValidDatabaseName(name));
  }

  async create(name: string): Promise<void> {
    assertValidDatabaseName(name);
    await this.#build(name, async (staging) => {
      const { PGlite } = await pgliteModules.load();
      const pglite = await PGlite.create(staging, { parsers: pgliteParsers }); // runs initdb (seconds)
      await pglite.close();
    });
  }

  async drop(name: string): Promise<void> {
    assertValidDatabaseName(name);
    if (!(await this.#exists(name))) throw notFound(name);
    await this.closeDatabase(name);
    const lock = await FileLock.acquire(this.#lockPath(name), name);
    try {
      // Rename first so an interrupted delete leaves a hidden leftover, not a broken database.
      const trash = this.#scratchPath('dropping', name);
      await fs.rename(this.#dir(name), trash);
      for (const listener of this.#goneListeners) listener(name);
      await fs.rm(trash, { recursive: true, force: true });
    } catch (error) {
      if (errorCode(error) === 'ENOENT') throw notFound(name);
      throw error;
    } finally {
      await lock.release();
    }
  }

  async clone(source: string, target: string): Promise<void> {
    assertValidDatabaseName(source);
    assertValidDatabaseName(target);
    if (!(await this.#exists(source))) throw notFound(source);
    // Checked before closing the source so a doomed clone does not disturb its users (and again in #build).
    if (await this.#exists(target)) throw alreadyExists(target);
    await this.closeDatabase(source);
    // Holding the source lock guarantees no PGlite (ours or another process's) writes during the copy.
    const sourceLock = await FileLock.acquire(this.#lockPath(source), source);
    try {
      await this.#build(target, (staging) => fs.cp(this.#dir(source), staging, { recursive: true }));
    } finally {
      await sourceLock.release();
    }
  }

  async open(name: string): Promise<TenantDatabase> {
    assertValidDatabaseName(name);
    const cached = this.#open.get(name);
    if (cached) return cached;
    // Cache the promise, not the result, so concurrent opens share one PGlite instance.
    const opening = this.#start(name);
    this.#open.set(name, opening);
    opening.catch(() => {
      if (this.#open.get(name) === opening) this.#open.delete(name);
    });
    return opening;
  }

  async closeDatabase(name: string): Promise<void> {
    const opening = this.#open.get(name);
    if (!opening) return;
    this.#open.delete(name);
    const db = await opening.catch(() => undefined);
    await db?.close();
  }

  async close(): Promise<void> {
    await Promise.all([...this.#open.keys()].map((name) => this.closeDatabase(name)));
  }

  async #start(name: string): Promise<PgliteDatabase> {
    if (!(await this.#exists(name))) throw notFound(name);
    const lock = await FileLock.acquire(this.#lockPath(name), name);
    try {
      // Re-check under the lock: another process may have dropped it meanwhile.
      if (!(await this.#exists(name))) throw notFound(name);
      const { PGlite, PGliteDialect } = await pgliteModules.load();
      const pglite = await PGlite.create(this.#dir(name), { parsers: pgliteParsers });
      if (this.#settings) await pglite.exec(this.#settings).catch(async (error: unknown) => {
        await pglite.close();
        throw error;
      });
      return new PgliteDatabase(name, pglite, lock, PGliteDialect);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /**
   * Creates database `name` by filling a hidden staging directory and renaming it into place, so
   * a crash never leaves a half-initialised directory that looks like a database.
   */
  async #build(name: string, fill: (staging: string) => Promise<void>): Promise<void> {
    await fs.mkdir(this.#root, { recursive: true });
    if (await this.#exists(name)) throw alreadyExists(name);
    const lock = await FileLock.acquire(this.#lockPath(name), name);
    const staging = this.#scratchPath('staging', name);
    try {
      if (await this.#exists(name)) throw alreadyExists(name);
      await fill(staging);
      await fs.rename(staging, this.#dir(name));
    } finally {
      await fs.rm(staging, { recursive: true, force: true });
      await lock.release();
    }
  }

  async #exists(name: string): Promise<boolean> {
    try {
      return (await fs.stat(this.#dir(name))).isDirectory();
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return false;
      throw error;
    }
  }

  #dir(name: string): string {
    return path.join(this.#root, name);
  }

  #lockPath(name: string): string {
    return `${this.#dir(name)}.lock`;
  }

  #scratchPath(kind: 'staging' | 'dropping', name: string): string {
    return path.join(this.#root, `.${kind}-${name}-${randomBytes(4).toString('hex')}`);
  }
}

/**
 * A lock file holding the owner's pid, created exclusively. A lock whose pid is no longer alive is
 * stale (crashed process) and taken over. Limits: two processes taking over the same stale lock at
 * the same instant can both succeed, and a recycled pid makes a stale lock look alive — the error
 * names the lock file so an operator can remove it.
 */
class FileLock {
  private constructor(private readonly file: string) {}

  static async acquire(file: string, name: string): Promise<FileLock> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const handle = await fs.open(file, 'wx');
        try {
          await handle.writeFile(String(process.pid));
        } finally {
          await handle.close();
        }
        return new FileLock(file);
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      const holder = await readHolder(file);
      if (holder === 'gone') continue; // released meanwhile: try again
      if (holder !== 'unreadable' && isAlive(holder)) {
        throw new DatabaseBusy(`Database "${name}" is in use by process ${holder} (lock file ${file})`);
      }
      await fs.rm(file, { force: true }); // stale: its owner died without releasing it
    }
    throw new DatabaseBusy(`Database "${name}" is being locked by another process (lock file ${file})`);
  }

  async release(): Promise<void> {
    await fs.rm(this.file, { force: true });
  }
}

/**
 * The pid in a lock file. A just-created file may still be empty (created, pid not yet written),
 * so an empty read is retried briefly before the file counts as unreadable (hence stale).
 */
async function readHolder(file: string): Promise<number | 'gone' | 'unreadable'> {
  for (let attempt = 0; attempt < 5; attempt++) {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return 'gone';
      throw error;
    }
    if (/^\d+$/.test(text.trim())) return Number(text.trim());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return 'unreadable';
}

/** Signal 0 checks existence without signalling; EPERM means alive but owned by another user. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

function notFound(name: string): DatabaseNotFound {
  return new DatabaseNotFound(`Database "${name}" does not exist`);
}

function alreadyExists(name: string): ValidationError {
  return new ValidationError(`Database "${name}" already exists`);
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}
