/**
 * One worker's PostgreSQL connections, shared by every database it serves (`FF_PG_MAX_CONNECTIONS`).
 *
 * A cluster has one `max_connections` for all its databases, so a pool per database, each bounded
 * on its own, lets a worker serving many databases take every slot of the cluster (one pool of 10
 * per open database: 500 connections for 50 databases). Here every database's pool borrows from
 * one budget instead:
 *
 * - The budget counts connections from the moment one is asked for until the server has closed
 *   it, so the worker never holds more than `max`, not even while one database's connection is
 *   being replaced by another's. A database still holds at most its own `max` (`FF_DB_POOL_MAX`).
 * - A checkout takes an idle connection of its database when there is one; else opens one while
 *   the budget has room; else closes the idle connection that has waited longest — the coldest
 *   database's — and opens its own in its place.
 * - When nothing is idle, checkouts wait in one queue for the whole worker, first come first
 *   served whatever their database, up to `queueMax` of them, each for at most `waitMs`; then
 *   `DatabaseBusy` (503, Retry-After: 5). A released connection goes to the oldest waiter that can
 *   take it: a waiter of the same database, or — when the oldest waits for another database —
 *   it is closed to make room for that one.
 *
 * Connections are plain `pg.Client`s; a checkout gets `release(destroy?)` as from `pg.Pool`.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { DatabaseBusy } from '../errors.js';

export interface ConnectionBudgetOptions {
  /** Most connections open at once, all databases together. */
  readonly max: number;
  /** Longest a checkout waits for a connection, milliseconds. */
  readonly waitMs: number;
  /** Most checkouts waiting at once; more are refused at once. */
  readonly queueMax: number;
  /** An idle connection is closed after this long (milliseconds). */
  readonly idleTimeoutMs: number;
}

/** What `pg.Pool` offered the engine, and all it uses of one. */
export interface ConnectionSource {
  connect(): Promise<pg.PoolClient>;
  end(): Promise<void>;
  readonly ended: boolean;
  readonly ending: boolean;
}

/** pg-pool's words, which the rest of the engine already reads as "this pool is gone". */
const ENDED_MESSAGE = 'Cannot use a pool after calling end on the pool';

/** One connection of the budget. */
interface Connection {
  readonly client: pg.Client;
  readonly pool: BudgetedPool;
  /** The client reported an error or ended: never handed out again. */
  broken: boolean;
  /** `end()` was called on the client. */
  closing: boolean;
  checkedOut: boolean;
  idleTimer?: NodeJS.Timeout;
}

interface Waiter {
  readonly pool: BudgetedPool;
  readonly resolve: (client: pg.PoolClient) => void;
  readonly reject: (error: unknown) => void;
  timer?: NodeJS.Timeout;
  /** Settled (served, refused or timed out): a connection arriving later goes back to the budget. */
  settled: boolean;
}

export class ConnectionBudget {
  /** Connections asked for and not yet closed by the server, all databases. */
  #open = 0;
  readonly #waiters: Waiter[] = [];
  /** Idle connections of every database, the longest idle first (a Map keeps insertion order). */
  readonly #idle = new Map<Connection, true>();
  #peak = 0;

  constructor(readonly options: ConnectionBudgetOptions) {
    if (!Number.isSafeInteger(options.max) || options.max < 1) throw new Error('A connection budget needs at least one connection');
  }

  /** A pool for one database, borrowing from this budget; `max` bounds that database alone. */
  pool(config: pg.ClientConfig, max: number): BudgetedPool {
    return new BudgetedPool(this, config, Math.max(1, Math.min(max, this.options.max)));
  }

  /** Connections open now (or being opened or closed), all databases. */
  get open(): number {
    return this.#open;
  }

  /** The most connections ever open at once (tests, ops). */
  get peak(): number {
    return this.#peak;
  }

  /** Checkouts waiting for a connection now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** @internal A checkout of `pool` (see the file comment). */
  checkout(pool: BudgetedPool): Promise<pg.PoolClient> {
    // Idle here means no waiter can use it (`#serve` gives idle connections away at once), so
    // taking it skips nobody.
    const idle = pool.takeIdle();
    if (idle) {
      this.#fromIdle(idle);
      return Promise.resolve(this.#handOut(idle));
    }
    if (this.#waiters.length >= this.options.queueMax) {
      return Promise.reject(new DatabaseBusy(
        `${this.#waiters.length} requests of this worker are already waiting for a database connection (FF_PG_MAX_CONNECTIONS is ${this.options.max}); retry shortly`,
      ));
    }
    return new Promise<pg.PoolClient>((resolve, reject) => {
      const waiter: Waiter = { pool, resolve, reject, settled: false };
      waiter.timer = setTimeout(() => {
        this.#forget(waiter);
        this.#settle(waiter, () => reject(new DatabaseBusy(
          `Every database connection of this worker stayed in use for ${this.options.waitMs / 1000} s `
          + `(FF_PG_MAX_CONNECTIONS is ${this.options.max}); retry shortly`,
        )));
      }, this.options.waitMs);
      this.#waiters.push(waiter);
      this.#serve();
    });
  }

  /** @internal Rejects the waiters of a pool that is ending. */
  abandon(pool: BudgetedPool): void {
    for (const waiter of this.#waiters.filter((w) => w.pool === pool)) {
      this.#forget(waiter);
      this.#settle(waiter, () => waiter.reject(new Error(ENDED_MESSAGE)));
    }
  }

  /** @internal A checked-out connection comes back (`destroy`: its state is unknown, close it). */
  release(connection: Connection, destroy: boolean): void {
    connection.checkedOut = false;
    connection.pool.checkedOut--;
    if (destroy) connection.broken = true;
    this.#reclaim(connection);
  }

  /** @internal Closes a connection; its place in the budget is free once the server has let it go. */
  close(connection: Connection): void {
    this.#fromIdle(connection);
    if (connection.closing) return;
    connection.closing = true;
    connection.broken = true;
    void connection.client.end().catch(() => {}).then(() => {
      connection.pool.closed();
      this.#open--;
      this.#serve();
    });
  }

  /** A connection nobody holds: idle for the next checkout, or closed when it cannot serve again. */
  #reclaim(connection: Connection): void {
    if (connection.broken || connection.pool.ending) this.close(connection);
    else {
      this.#toIdle(connection);
      this.#serve();
    }
  }

  /** Gives waiting checkouts what can be given now, oldest first (see the file comment). */
  #serve(): void {
    for (let i = 0; i < this.#waiters.length;) {
      const waiter = this.#waiters[i]!;
      const { pool } = waiter;
      const idle = pool.takeIdle();
      if (idle) {
        this.#fromIdle(idle);
        this.#waiters.splice(i, 1);
        this.#settle(waiter, () => waiter.resolve(this.#handOut(idle)), () => this.#reclaim(idle));
        continue;
      }
      if (pool.total >= pool.max) {
        i++; // waits for its own database's connections
        continue;
      }
      if (this.#open < this.options.max) {
        this.#waiters.splice(i, 1);
        this.#open++;
        this.#peak = Math.max(this.#peak, this.#open);
        this.#connect(waiter);
        continue;
      }
      const coldest = this.#idle.keys().next().value as Connection | undefined;
      if (!coldest) return; // nothing idle anywhere: only a release or a close can help
      // Its place goes to this waiter once the server has closed it: the budget never overflows.
      this.#waiters.splice(i, 1);
      this.#fromIdle(coldest);
      coldest.broken = true;
      coldest.closing = true;
      pool.opening++;
      void coldest.client.end().catch(() => {}).then(() => {
        coldest.pool.closed();
        pool.opening--;
        this.#connect(waiter);
      });
    }
  }

  /** Opens a connection for `waiter`, whose place in the budget is already counted. */
  #connect(waiter: Waiter): void {
    const { pool } = waiter;
    const client = new pg.Client(pool.config);
    const connection: Connection = { client, pool, broken: false, closing: false, checkedOut: false };
    pool.opened();
    const died = () => {
      // A connection dying while idle (a restart, `pg_terminate_backend`) leaves at once; one
      // checked out fails its next statement and is closed when released.
      connection.broken = true;
      if (this.#idle.has(connection)) this.close(connection);
    };
    client.on('error', died);
    client.on('end', died);
    client.connect().then(
      () => this.#settle(waiter, () => waiter.resolve(this.#handOut(connection)), () => this.#reclaim(connection)),
      (error: unknown) => {
        pool.closed();
        this.#open--;
        this.#settle(waiter, () => waiter.reject(error));
        this.#serve();
      },
    );
  }

  #handOut(connection: Connection): pg.PoolClient {
    connection.checkedOut = true;
    connection.pool.checkedOut++;
    const client = connection.client as pg.PoolClient;
    connection.pool.emit('acquire', client);
    let released = false;
    client.release = (destroy?: Error | boolean) => {
      if (released) throw new Error('A database connection was released twice');
      released = true;
      this.release(connection, Boolean(destroy));
    };
    return client;
  }

  #toIdle(connection: Connection): void {
    connection.pool.putIdle(connection);
    this.#idle.set(connection, true);
    connection.idleTimer = setTimeout(() => this.close(connection), this.options.idleTimeoutMs);
    connection.idleTimer.unref();
  }

  #fromIdle(connection: Connection): void {
    if (!this.#idle.delete(connection)) return;
    clearTimeout(connection.idleTimer);
    connection.pool.dropIdle(connection);
  }

  #forget(waiter: Waiter): void {
    const at = this.#waiters.indexOf(waiter);
    if (at >= 0) this.#waiters.splice(at, 1);
  }

  /** Settles a waiter once; a waiter already settled hands what it got to `otherwise`. */
  #settle(waiter: Waiter, settle: () => void, otherwise?: () => void): void {
    if (waiter.settled) {
      otherwise?.();
      return;
    }
    waiter.settled = true;
    clearTimeout(waiter.timer);
    settle();
  }
}

/**
 * One database's connections, borrowed from the budget: what the engine used of `pg.Pool`
 * (`connect`, `end`, `ended`, `ending`), its counts, and pg-pool's `acquire` event (a client
 * handed out; tests watch the protocol through it).
 */
export class BudgetedPool extends EventEmitter implements ConnectionSource {
  /** Idle connections, the most recently released last (reused first, so the others can time out). */
  readonly #idle: Connection[] = [];
  #total = 0;
  /** Places taken in the budget for connections not opened yet (waiting for a colder one to close). */
  opening = 0;
  checkedOut = 0;
  ending = false;
  ended = false;
  #ended?: () => void;

  constructor(
    readonly budget: ConnectionBudget,
    readonly config: pg.ClientConfig,
    readonly max: number,
  ) {
    super();
  }

  /** Connections of this database open now (or being opened or closed). */
  get totalCount(): number {
    return this.#total;
  }

  get idleCount(): number {
    return this.#idle.length;
  }

  /** @internal Connections counted against this database's own `max`. */
  get total(): number {
    return this.#total + this.opening;
  }

  connect(): Promise<pg.PoolClient> {
    if (this.ending) return Promise.reject(new Error(ENDED_MESSAGE));
    return this.budget.checkout(this);
  }

  /** Refuses new checkouts, closes the idle connections, and resolves once every connection is closed. */
  end(): Promise<void> {
    if (this.ended) return Promise.resolve();
    const done = new Promise<void>((resolve) => {
      const previous = this.#ended;
      this.#ended = () => {
        previous?.();
        resolve();
      };
    });
    this.ending = true;
    this.budget.abandon(this);
    for (const connection of [...this.#idle]) this.budget.close(connection);
    this.#maybeEnded();
    return done;
  }

  /** @internal The most recently released idle connection, if any. */
  takeIdle(): Connection | undefined {
    return this.#idle.pop();
  }

  /** @internal */
  putIdle(connection: Connection): void {
    if (!this.#idle.includes(connection)) this.#idle.push(connection);
  }

  /** @internal */
  dropIdle(connection: Connection): void {
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
  }

  /** @internal */
  opened(): void {
    this.#total++;
  }

  /** @internal */
  closed(): void {
    this.#total--;
    this.#maybeEnded();
  }

  #maybeEnded(): void {
    if (this.ending && this.#total === 0 && this.opening === 0 && !this.ended) {
      this.ended = true;
      this.#ended?.();
    }
  }
}
