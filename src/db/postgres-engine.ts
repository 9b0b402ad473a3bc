/**
 * The PostgreSQL-server engine: each FieldForge database is one PostgreSQL database in the cluster
 * named by the URL. The cluster may hold other databases (postgres, test, someone else's app), so
 * ours carry a marker — `COMMENT ON DATABASE x IS 'fieldforge'` — and every operation refuses a
 * database without it: `list()` never shows it, `open`/`drop`/`clone` answer `DatabaseNotFound`.
 *
 * Pools: one pool per open database, created lazily and cached (LRU-capped, so thousands of
 * databases do not keep thousands of pools' state), plus one small admin pool to the maintenance
 * database for CREATE/DROP DATABASE and catalog queries. Every pool, the admin one included,
 * borrows its connections from one budget of the engine (`connection-budget.ts`,
 * `FF_PG_MAX_CONNECTIONS`): however many databases a worker serves, it never holds more.
 *
 * Failures (`translating-pool.ts`, `database-errors.ts`): a database dropped by another process is
 * noticed by the first connection attempt (3D000), which closes its pool and tells the listeners
 * of `onDatabaseGone`; a server out of reach is `DatabaseUnavailable`, and the pools reconnect by
 * themselves when it is back. Request pools carry the statement and lock timeouts.
 */
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { pgTypes } from './type-parsers.js';
import { DatabaseBusy, DatabaseNotFound, ValidationError } from '../errors.js';
import { connectionFailure, sqlState } from './database-errors.js';
import { assertValidDatabaseName } from './database-name.js';
import type { DatabaseGoneListener, Engine, StatementListener, TenantDatabase } from './engine.js';
import { DirectStatements } from './direct-statements.js';
import type { SqlExecutor } from './sql-executor.js';
import { StatementCounter } from './statement-counter.js';
import { PreparingPool, type PreparedStatementOptions } from './prepared-statements.js';
import { TranslatingPool } from './translating-pool.js';
import { ConnectionBudget, type BudgetedPool } from './connection-budget.js';

export interface PostgresEngineOptions {
  /** e.g. `postgres://user:pw@host:5432/postgres`; the path names the maintenance database. */
  url: string;
  /** Connections per open database (default 10). */
  poolMax?: number;
  /** Connections of all databases together, the admin pool's included (default 20; `FF_PG_MAX_CONNECTIONS`). */
  maxConnections?: number;
  /** Longest a request waits for a connection when all are in use, milliseconds (default 10,000). */
  connectionWaitMs?: number;
  /** Most requests waiting for a connection at once; more answer 503 at once (default 1,000). */
  connectionQueueMax?: number;
  /** Open pools kept before the least recently used one is closed (default 50). */
  maxOpenDatabases?: number;
  /**
   * Send repeated DML as named prepared statements (default true; see `prepared-statements.ts`).
   * Turn off behind PgBouncer in transaction mode older than 1.21.
   */
  prepareStatements?: boolean;
  /** Named prepared statements kept per connection (default 256). */
  maxPreparedStatements?: number;
  /**
   * Longest a statement of a database pool may run, milliseconds (PostgreSQL's `statement_timeout`,
   * sent when each connection starts; `FF_STATEMENT_TIMEOUT`). Unset or 0: no limit.
   */
  statementTimeoutMs?: number;
  /** Longest a statement of a database pool may wait for a lock, milliseconds (`lock_timeout`; `FF_LOCK_TIMEOUT`). Unset or 0: no limit. */
  lockTimeoutMs?: number;
}

/** The comment that marks a PostgreSQL database as a FieldForge database. */
const MARKER = 'fieldforge';
/** Our sessions identify themselves so `clone` can tell our idle connections from anyone else's. */
const APPLICATION_NAME = 'fieldforge';
const IDLE_TIMEOUT_MS = 30_000;
/** Waits after each `clone` attempt that found sessions on the source (≈1.5 s in all). */
const CLONE_RETRY_DELAYS_MS = [50, 100, 200, 400, 800];

/** PostgreSQL SQLSTATEs we translate into FieldForge errors. */
const DUPLICATE_DATABASE = '42P04';
const INVALID_CATALOG_NAME = '3D000';
const OBJECT_IN_USE = '55006';

/** An open database: its own pool behind a Kysely instance that counts statements. */
class PooledDatabase implements TenantDatabase {
  readonly executor: Kysely<any>;
  readonly #counter = new StatementCounter();
  /** The ORM's statements, straight to the pool's connections (`direct-statements.ts`). */
  readonly #direct: DirectStatements;

  constructor(
    readonly name: string,
    readonly pool: BudgetedPool,
    prepared: PreparedStatementOptions | false,
    /** Called when connecting shows the database no longer exists. */
    onMissing: () => void,
  ) {
    const statements = prepared ? new PreparingPool(pool, prepared) : pool;
    const translating = new TranslatingPool(statements, name, onMissing);
    const dialect = new PostgresDialect({ pool: translating });
    this.executor = new Kysely<any>({ dialect, log: this.#counter.logger });
    this.#direct = new DirectStatements(translating, this.#counter, this.executor);
  }

  transaction<T>(fn: (trx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.#direct.transaction(fn);
  }

  get statementCount(): number {
    return this.#counter.count;
  }

  onStatement(listener: StatementListener): () => void {
    return this.#counter.on(listener);
  }

  async close(): Promise<void> {
    await this.executor.destroy();
    await this.retire(); // Kysely only ends the pool if it was ever used
  }

  /**
   * Ends the pool once its checked-out connections are released, leaving the Kysely instance to
   * requests still holding it: their next checkout answers `DatabaseNotFound` (`TranslatingPool`)
   * instead of Kysely's "driver has already been destroyed".
   */
  async retire(): Promise<void> {
    if (!this.pool.ended && !this.pool.ending) await this.pool.end();
  }
}

export class PostgresEngine implements Engine {
  readonly kind = 'postgres' as const;
  readonly #url: URL;
  readonly #user: string;
  readonly #poolMax: number;
  readonly #maxOpenDatabases: number;
  readonly #prepared: PreparedStatementOptions | false;
  readonly #timeouts: { statement_timeout?: number; lock_timeout?: number };
  readonly #budget: ConnectionBudget;
  readonly #admin: BudgetedPool;
  /** Open databases in least-recently-used-first order (a Map keeps insertion order; hits re-insert). */
  readonly #open = new Map<string, Promise<PooledDatabase>>();
  readonly #goneListeners = new Set<DatabaseGoneListener>();

  constructor(options: PostgresEngineOptions) {
    this.#url = new URL(options.url);
    // Without an explicit user pg falls back to $USER (e.g. `root`), which usually has no role.
    this.#user = decodeURIComponent(this.#url.username) || this.#url.searchParams.get('user') || 'postgres';
    this.#poolMax = options.poolMax ?? 10;
    this.#maxOpenDatabases = options.maxOpenDatabases ?? 50;
    this.#prepared = options.prepareStatements === false ? false : { maxPerConnection: options.maxPreparedStatements };
    // pg sends a timeout as a startup parameter only when it is set and not 0.
    this.#timeouts = { statement_timeout: options.statementTimeoutMs || undefined, lock_timeout: options.lockTimeoutMs || undefined };
    this.#budget = new ConnectionBudget({
      max: options.maxConnections ?? 20,
      waitMs: options.connectionWaitMs ?? 10_000,
      queueMax: options.connectionQueueMax ?? 1_000,
      idleTimeoutMs: IDLE_TIMEOUT_MS,
    });
    const maintenance = decodeURIComponent(this.#url.pathname.slice(1)) || 'postgres';
    this.#admin = this.#createPool(maintenance, 2);
  }

  /** The connections of every database together (tests, ops). */
  get connections(): { open: number; peak: number; waiting: number; max: number } {
    const budget = this.#budget;
    return { open: budget.open, peak: budget.peak, waiting: budget.waiting, max: budget.options.max };
  }

  /** Names of the databases whose pools are currently open, least recently used first (tests, ops). */
  get openDatabases(): string[] {
    return [...this.#open.keys()];
  }

  /** Connections currently held by an open database's pool, or undefined if it is not open (tests, ops). */
  async poolSize(name: string): Promise<number | undefined> {
    const db = await this.#open.get(name)?.catch(() => undefined);
    return db?.pool.totalCount;
  }

  onDatabaseGone(listener: DatabaseGoneListener): () => void {
    this.#goneListeners.add(listener);
    return () => this.#goneListeners.delete(listener);
  }

  async list(): Promise<string[]> {
    const { rows } = await this.#adminQuery<{ datname: string }>(
      `${MARKED_DATABASES} AND d.datconnlimit <> ${INVALID_CONNLIMIT} ORDER BY d.datname`,
      [MARKER],
    );
    return rows.map((r) => r.datname);
  }

  async exists(name: string): Promise<boolean> {
    return this.#isMarked(assertValidDatabaseName(name));
  }

  async create(name: string): Promise<void> {
    assertValidDatabaseName(name);
    await this.#createDatabase(`CREATE DATABASE ${quoteIdent(name)}`, name);
  }

  async drop(name: string): Promise<void> {
    assertValidDatabaseName(name);
    // A half-dropped database still has its marker; dropping it again completes the drop.
    if (!(await this.#isMarked(name, { includeInvalid: true }))) throw notFound(name);
    await this.closeDatabase(name);
    try {
      // FORCE terminates every session on it (ours in other processes included): drop means gone.
      await this.#adminQuery(`DROP DATABASE ${quoteIdent(name)} WITH (FORCE)`);
    } catch (error) {
      if (sqlState(error) !== INVALID_CATALOG_NAME) throw error;
      this.#announceGone(name);
      throw notFound(name);
    }
    this.#announceGone(name);
  }

  async clone(source: string, target: string): Promise<void> {
    assertValidDatabaseName(source);
    assertValidDatabaseName(target);
    if (!(await this.#isMarked(source))) throw notFound(source);
    // Checked before closing the source pool so a doomed clone does not disturb its users; any
    // database of that name counts, ours or not (CREATE DATABASE re-checks atomically).
    const { rowCount } = await this.#adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [target]);
    if (rowCount) throw alreadyExists(target);
    // PostgreSQL refuses a template that has any session, so our own pool must go first.
    await this.closeDatabase(source);
    const statement = `CREATE DATABASE ${quoteIdent(target)} TEMPLATE ${quoteIdent(source)}`;
    for (const delay of CLONE_RETRY_DELAYS_MS) {
      // Idle FieldForge connections (other processes' pools) are safe to cut: pg-pool discards the
      // dead client and reconnects. Busy ones and foreign sessions are left alone.
      await this.#terminateOurIdleSessions(source);
      // Look before trying: with sessions on the template, CREATE DATABASE itself waits 5 s
      // before failing, which would make every retry cost 5 s.
      if ((await this.#sessionCount(source)) === 0) {
        try {
          await this.#createDatabase(statement, target);
          return;
        } catch (error) {
          if (sqlState(error) !== OBJECT_IN_USE) throw error; // a session arrived meanwhile
        }
      }
      await sleep(delay);
    }
    const others = await this.#sessionCount(source);
    throw new DatabaseBusy(
      `Cannot clone database "${source}": ${others} other session(s) are connected to it; close them and retry`,
    );
  }

  async open(name: string): Promise<TenantDatabase> {
    assertValidDatabaseName(name);
    const cached = this.#open.get(name);
    if (cached) {
      this.#open.delete(name);
      this.#open.set(name, cached); // mark most recently used
      return cached;
    }
    // Cache the promise, not the result, so concurrent opens share one pool.
    const opening: Promise<PooledDatabase> = this.#isMarked(name).then((marked) => {
      if (!marked) throw notFound(name);
      const pool = this.#createPool(name, this.#poolMax, this.#timeouts);
      return new PooledDatabase(name, pool, this.#prepared, () => this.#forgetMissing(name, opening));
    });
    this.#open.set(name, opening);
    opening.catch(() => {
      if (this.#open.get(name) === opening) this.#open.delete(name);
    });
    this.#evictLeastRecentlyUsed();
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
    if (!this.#admin.ended && !this.#admin.ending) await this.#admin.end();
  }

  /**
   * Closes pools beyond `maxOpenDatabases`, oldest use first. A handle obtained earlier from an
   * evicted database stops working (pg: "Cannot use a pool after calling end"), so callers should
   * `open()` per unit of work rather than keep handles.
   */
  #evictLeastRecentlyUsed(): void {
    while (this.#open.size > this.#maxOpenDatabases) {
      const oldest = this.#open.keys().next().value as string;
      // Not awaited: open() should not wait for another database's in-flight queries to finish.
      this.closeDatabase(oldest).catch(() => {});
    }
  }

  /**
   * A connection found database `name` gone (another process dropped or renamed it): forget it
   * here — a later `open` looks it up again and answers `DatabaseNotFound` — and tell the listeners.
   */
  #forgetMissing(name: string, opening: Promise<PooledDatabase>): void {
    if (this.#open.get(name) === opening) this.#open.delete(name);
    void opening.then((db) => db.retire()).catch(() => {});
    this.#announceGone(name);
  }

  #announceGone(name: string): void {
    for (const listener of this.#goneListeners) listener(name);
  }

  /** A query on the maintenance database; a server out of reach is `DatabaseUnavailable`. */
  async #adminQuery<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    let client: pg.PoolClient;
    try {
      client = await this.#admin.connect();
    } catch (error) {
      throw connectionFailure(error) ?? error;
    }
    try {
      const result = await client.query<R>(text, values);
      client.release();
      return result;
    } catch (error) {
      const lost = connectionFailure(error);
      client.release(lost !== undefined); // a connection that failed is not reused
      throw lost ?? error;
    }
  }

  /** Runs a CREATE DATABASE statement and marks the result as ours. */
  async #createDatabase(statement: string, name: string): Promise<void> {
    try {
      await this.#adminQuery(statement);
    } catch (error) {
      if (sqlState(error) === DUPLICATE_DATABASE) {
        throw alreadyExists(name);
      }
      throw error;
    }
    try {
      // CREATE DATABASE cannot run in a transaction, so the marker is a second step; if it fails,
      // remove the unmarked database rather than leave an invisible one holding the name.
      await this.#adminQuery(`COMMENT ON DATABASE ${quoteIdent(name)} IS '${MARKER}'`);
    } catch (error) {
      await this.#adminQuery(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`).catch(() => {});
      throw error;
    }
  }

  async #isMarked(name: string, { includeInvalid = false } = {}): Promise<boolean> {
    const valid = includeInvalid ? '' : ` AND d.datconnlimit <> ${INVALID_CONNLIMIT}`;
    const { rows } = await this.#adminQuery(`${MARKED_DATABASES} AND d.datname = $2${valid}`, [MARKER, name]);
    return rows.length > 0;
  }

  async #sessionCount(name: string): Promise<number> {
    const { rows } = await this.#adminQuery<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    return rows[0]?.n ?? 0;
  }

  async #terminateOurIdleSessions(name: string): Promise<void> {
    await this.#adminQuery(
      // The timeout makes pg_terminate_backend wait for the backend to exit (up to 1 s).
      `SELECT pg_terminate_backend(pid, 1000) FROM pg_stat_activity
        WHERE datname = $1 AND application_name = $2 AND state = 'idle' AND pid <> pg_backend_pid()`,
      [name, APPLICATION_NAME],
    );
  }

  #createPool(database: string, max: number, timeouts: { statement_timeout?: number; lock_timeout?: number } = {}): BudgetedPool {
    const url = new URL(this.#url.href);
    url.pathname = `/${database}`; // validated name (or the URL's own maintenance path): no escaping needed
    // pg lets the connection string override explicit options, and an empty user there would
    // win over `user` below; the `user` query parameter works for every URL form (sockets too).
    if (!url.username && !url.searchParams.has('user')) url.searchParams.set('user', this.#user);
    // A client dying under us, idle or between two statements of a request (DROP … WITH (FORCE),
    // another process's clone, a server restart), is discarded by the budget, which listens to its
    // 'error' events; the request holding it learns of it from its next statement.
    const config: pg.ClientConfig = {
      connectionString: url.href, user: this.#user, application_name: APPLICATION_NAME, types: pgTypes, ...timeouts,
    };
    return this.#budget.pool(config, max);
  }
}

/** Databases carrying our marker (`$1`); callers append further conditions. */
const MARKED_DATABASES = `SELECT d.datname FROM pg_database d
  JOIN pg_shdescription s ON s.objoid = d.oid AND s.classoid = 'pg_database'::regclass
  WHERE s.description = $1`;
/** `datconnlimit` of a database whose DROP was interrupted: it cannot be connected to, only dropped. */
const INVALID_CONNLIMIT = -2;

/** Double-quotes an identifier (names are validated first; this is the second fence). */
function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function notFound(name: string): DatabaseNotFound {
  return new DatabaseNotFound(`Database "${name}" does not exist`);
}

function alreadyExists(name: string): ValidationError {
  return new ValidationError(`Database "${name}" already exists`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
