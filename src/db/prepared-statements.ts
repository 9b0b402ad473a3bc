/**
 * Named prepared statements for the PostgreSQL engine. Kysely's PostgresConnection calls
 * `client.query(sql, params)`, which pg sends unnamed: PostgreSQL parses and plans the text again on
 * every call. `PreparingPool` wraps the `pg.Pool` handed to Kysely's PostgresDialect; its clients
 * turn `query(text, values)` into `query({ name, text, values })` when that pays off:
 *
 * - only DML (text starting with SELECT/INSERT/UPDATE/DELETE/WITH), never DDL, transaction control,
 *   SET, SAVEPOINT…; a parameterless text holding `;` (possibly several statements) is left alone;
 * - only once the pool has seen the text `minUses` times (2), counted in a bounded LRU map of
 *   statement names, so one-off statements never occupy a connection;
 * - at most `maxPerConnection` (256) per connection: preparing one more first DEALLOCATEs the least
 *   recently used one on that connection (and removes it from pg's per-connection cache).
 *
 * The name is `ff_` + 32 hex digits of the SHA-1 of the text: the same text always has the same name,
 * on every connection. Each connection's calls are serialised here (pg would queue them anyway), so
 * an eviction's DEALLOCATE never races a query of the same connection that uses the evicted name.
 *
 * Stale plans. PostgreSQL re-plans a prepared statement after DDL, but fails it with 0A000 "cached
 * plan must not change result type" when its result columns changed (`SELECT *` after ADD COLUMN,
 * ALTER COLUMN TYPE). DDL sent through this pool bumps the pool's schema epoch: the connection that
 * ran it prepares nothing more until it is released, and every connection DEALLOCATEs ALL when next
 * acquired. DDL from elsewhere (another process) is caught on use: on 0A000, 26000 (prepared
 * statement does not exist) or 42P05 (already exists) the connection forgets all its statements; outside
 * a transaction they are DEALLOCATEd and the statement is retried once, unnamed, so the caller sees
 * no error; inside a transaction the error aborts it (PostgreSQL's doing, nothing to retry), the
 * connection prepares nothing more until released and is cleaned when next acquired, so the next
 * attempt succeeds.
 *
 * Kysely's plain `begin` is held back and sent in the same write as the transaction's first
 * statement (begin-with-statement.ts): one round trip less per unit of work, and a unit of work
 * that runs no statement sends neither BEGIN nor COMMIT. A unit of work that declares its first
 * statement its only one (`queryAlone`) sends it without BEGIN: PostgreSQL commits it by itself,
 * and the COMMIT's round trip is saved too.
 *
 * Relies on two pg internals, both guarded: `client.connection.parsedStatements` (pg's record of the
 * names parsed on the connection) and `client.getTransactionStatus()`. A client without them is
 * used as is, unnamed. Internal DEALLOCATEs run below Kysely, so statement counts are unchanged.
 */
import { createHash } from 'node:crypto';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type { ConnectionSource } from './connection-budget.js';
import type pg from 'pg';
import { queryAfterBegin } from './begin-with-statement.js';
import { submitQuery } from './pg-query.js';

export interface PreparedStatementOptions {
  /** Named statements kept per connection; beyond it the least recently used is deallocated (default 256). */
  maxPerConnection?: number;
  /** Executions the pool must have seen of a text before a connection prepares it (default 2). */
  minUses?: number;
  /** Distinct statements whose executions the pool counts, least recently used forgotten first. */
  trackedStatements?: number;
}

export const DEFAULT_MAX_PREPARED_PER_CONNECTION = 256;

/** The statement name of a SQL text: stable, and distinct texts never share one. */
export function statementName(text: string): string {
  return `ff_${createHash('sha1').update(text).digest('hex').slice(0, 32)}`;
}

const DML = /^\s*(?:select|insert|update|delete|with)\b/i;
/** Statements that may change result types of existing statements. */
const DDL = /^\s*(?:create|alter|drop|do|import)\b/i;
/** Statements that deallocate prepared statements behind pg's back. */
const DEALLOCATING = /^\s*(?:deallocate|discard)\b/i;
/** Kysely's plain BEGIN (`start transaction …` with a level or mode is sent as is). */
const BEGIN = /^\s*begin\s*;?\s*$/i;
/** The end of a transaction whose BEGIN was never sent: nothing to send either. */
const END = /^\s*(?:commit|rollback|end|abort)\s*;?\s*$/i;
/** The successful end of a transaction (its only statement may have committed it already). */
const COMMIT = /^\s*(?:commit|end)\s*;?\s*$/i;

/** A client that can run a transaction's only statement without its BEGIN (`PreparingClient.queryAlone`). */
export interface AloneQueries {
  /** Whether the transaction has sent nothing yet, so that `queryAlone` would send its statement alone. */
  readonly sentNothing: boolean;
  queryAlone<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
}

/** Whether `client` offers `queryAlone`. */
export function runsAlone(client: object): client is AloneQueries {
  return typeof (client as Partial<AloneQueries>).queryAlone === 'function';
}

/** Whether a text is eligible as a named statement at all (repetition decides the rest). */
export function isPreparable(text: string, parameterCount: number): boolean {
  return DML.test(text) && (parameterCount > 0 || !text.includes(';'));
}

/** SQLSTATEs meaning the connection's prepared statements and pg's record of them disagree. */
const STALE_PLAN = '0A000'; // cached plan must not change result type
const NO_SUCH_STATEMENT = '26000';
const DUPLICATE_STATEMENT = '42P05';

type QueryResult = pg.QueryResult;

export class PreparingPool implements PostgresPool {
  readonly maxPerConnection: number;
  readonly minUses: number;
  readonly #trackedStatements: number;
  /** Executions seen per statement name, least recently used first. */
  readonly #uses = new Map<string, number>();
  /**
   * Statement name per SQL text (null: not preparable), first seen first. Hashing the text was a
   * measurable share of a one-row fetch (a SHA-1 of ~600 characters per statement); a Map lookup
   * hashes the string natively. Bounded like `#uses`.
   */
  readonly #names = new Map<string, string | null>();
  readonly #clients = new WeakMap<pg.PoolClient, PreparingClient>();
  /** Bumped by DDL through this pool (and by a stale plan); connections compare theirs on acquire. */
  schemaEpoch = 0;

  constructor(
    readonly pool: ConnectionSource,
    options: PreparedStatementOptions = {},
  ) {
    this.maxPerConnection = Math.max(0, Math.floor(options.maxPerConnection ?? DEFAULT_MAX_PREPARED_PER_CONNECTION));
    this.minUses = Math.max(1, Math.floor(options.minUses ?? 2));
    this.#trackedStatements = Math.max(1, options.trackedStatements ?? Math.max(1000, 4 * this.maxPerConnection));
  }

  connect(): Promise<PostgresPoolClient> {
    // `then`, not `await`: a checkout is on every statement's path, and each await is a promise more.
    return this.pool.connect().then((client) => this.#checkedOut(client));
  }

  #checkedOut(client: pg.PoolClient): PreparingClient | Promise<PreparingClient> {
    let wrapper = this.#clients.get(client);
    if (!wrapper) {
      wrapper = new PreparingClient(client, this);
      this.#clients.set(client, wrapper);
    }
    if (!wrapper.needsCleanup()) return wrapper.acquiredClean();
    return this.#cleanedUp(client, wrapper);
  }

  async #cleanedUp(client: pg.PoolClient, wrapper: PreparingClient): Promise<PreparingClient> {
    try {
      await wrapper.acquired();
    } catch (error) {
      client.release(error instanceof Error ? error : true); // destroys it: its state is unknown
      throw error;
    }
    return wrapper;
  }

  async end(): Promise<void> {
    if (!this.pool.ended && !this.pool.ending) await this.pool.end();
  }

  /** How many texts' names are remembered now (bounded by `trackedStatements`). */
  get namedTexts(): number {
    return this.#names.size;
  }

  /** The name `text` is prepared under, or null when it must go unnamed (`isPreparable`). */
  nameOf(text: string, parameterCount: number): string | null {
    let name = this.#names.get(text);
    if (name === undefined) {
      // A text's placeholders fix its parameter count, so the answer holds for every later call.
      name = isPreparable(text, parameterCount) ? statementName(text) : null;
      this.#names.set(text, name);
      if (this.#names.size > this.#trackedStatements) this.#names.delete(this.#names.keys().next().value as string);
    }
    return name;
  }

  /** Counts one execution of a statement; returns the count so far. */
  recordUse(name: string): number {
    const uses = Math.min((this.#uses.get(name) ?? 0) + 1, this.minUses);
    this.#uses.delete(name);
    this.#uses.set(name, uses);
    if (this.#uses.size > this.#trackedStatements) this.#uses.delete(this.#uses.keys().next().value as string);
    return uses;
  }
}

/** One pooled pg client as Kysely sees it; the same wrapper every time the client is acquired. */
class PreparingClient implements PostgresPoolClient {
  /** pg's record of the names parsed on this connection (name → text), or undefined if unavailable. */
  readonly #parsed: Record<string, string> | undefined;
  /** Our named statements on this connection, least recently used first. */
  readonly #prepared = new Set<string>();
  /** Names that may exist on the server but are no longer in pg's record: DEALLOCATE ALL on acquire. */
  #stale = false;
  /** Prepare nothing until the client is released (it ran DDL, or hit a stale plan in a transaction). */
  #suspended = false;
  /** It ran DDL during this checkout: bump the pool's epoch again on release (the DDL is committed by then). */
  #ranDdl = false;
  #epoch: number;
  /** Serialises this wrapper's calls on the client: the last call in flight (settled, never rejects). */
  #tail: Promise<unknown> = Promise.resolve();
  /** Calls in flight: a call made while none is runs at once, without waiting on `#tail`. */
  #inFlight = 0;
  /**
   * A BEGIN held back: it leaves with the transaction's first statement (begin-with-statement.ts),
   * and a transaction that ran no statement sends neither BEGIN nor COMMIT.
   */
  #beginHeld = false;
  /**
   * The transaction's only statement ran without BEGIN and PostgreSQL committed it (`queryAlone`):
   * its COMMIT has nothing to send, and anything else would run outside the unit of work.
   */
  #committedAlone = false;

  constructor(
    readonly client: pg.PoolClient,
    readonly owner: PreparingPool,
  ) {
    const connection = (client as unknown as { connection?: { parsedStatements?: unknown } }).connection;
    const parsed = connection?.parsedStatements;
    const supported =
      owner.maxPerConnection > 0 &&
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (client as Partial<pg.PoolClient>).getTransactionStatus === 'function';
    this.#parsed = supported ? (parsed as Record<string, string>) : undefined;
    this.#epoch = owner.schemaEpoch;
  }

  /** Names currently prepared by this wrapper on the connection (tests, ops). */
  get preparedNames(): string[] {
    return [...this.#prepared];
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query(sqlOrCursor: unknown, parameters?: ReadonlyArray<unknown>): unknown {
    if (this.#committedAlone) {
      if (typeof sqlOrCursor === 'string' && COMMIT.test(sqlOrCursor)) {
        this.#committedAlone = false;
        return Promise.resolve(notSent('COMMIT'));
      }
      // A ROLLBACK included: what the unit of work promised would be its only statement is committed.
      const refusal = new Error('This transaction\'s only statement has committed: nothing more can run in it, nor undo it');
      if (typeof sqlOrCursor !== 'string') throw refusal;
      return Promise.reject(refusal);
    }
    // A cursor (Kysely's streaming) goes straight to pg, unnamed; a held BEGIN is queued before it
    // (pg sends queued queries in order; were BEGIN to fail, the cursor's query fails with it).
    if (typeof sqlOrCursor !== 'string') {
      if (this.#beginHeld) {
        this.#beginHeld = false;
        this.client.query('BEGIN').catch(() => {});
      }
      return this.client.query(sqlOrCursor as pg.Submittable);
    }
    const values = parameters ? [...parameters] : [];
    // Sequential use (the common case) costs no chaining; a call made while another is in flight
    // waits for it (`#inFlight` drops in `#execute`'s finally, so `#tail` is then settled).
    if (this.#inFlight++ === 0) return this.#execute(sqlOrCursor, values);
    const result = this.#tail.then(() => this.#execute(sqlOrCursor, values));
    this.#tail = result.catch(() => {});
    return result;
  }

  /** Whether the transaction has sent nothing yet (its BEGIN is held, nothing in flight). */
  get sentNothing(): boolean {
    return this.#beginHeld && this.#inFlight === 0;
  }

  /**
   * Runs `text` as its transaction's only statement when the transaction has sent nothing yet:
   * without BEGIN, so PostgreSQL commits it on its own and the COMMIT that follows sends nothing.
   * The caller promises that nothing but the COMMIT follows. Failed, the statement wrote nothing,
   * and the transaction goes on as if it had never been sent. When the transaction has already
   * sent something (or is sending), this is an ordinary `query`.
   */
  queryAlone<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (!this.sentNothing) return this.query<R>(text, parameters);
    this.#beginHeld = false;
    this.#inFlight++;
    return this.#execute(text, [...parameters]).then(
      (result) => {
        this.#committedAlone = true;
        return result as PostgresQueryResult<R>;
      },
      (error: unknown) => {
        this.#beginHeld = true;
        throw error;
      },
    );
  }

  release(destroy?: Error | boolean): void {
    this.#beginHeld = false;
    this.#committedAlone = false;
    if (this.#ranDdl) {
      this.owner.schemaEpoch++; // committed (or rolled back) by now: plans made meanwhile may be stale
      this.#ranDdl = false;
    }
    this.client.release(destroy);
  }

  /** Whether `acquired` has statements to drop before this checkout. */
  needsCleanup(): boolean {
    return this.#parsed !== undefined && (this.#stale || (this.#epoch !== this.owner.schemaEpoch && this.#prepared.size > 0));
  }

  /** `acquired` when `needsCleanup` said no: only the checkout's state is reset. */
  acquiredClean(): this {
    this.#epoch = this.owner.schemaEpoch;
    this.#suspended = false;
    this.#ranDdl = false;
    return this;
  }

  /** Brings the connection in line with the pool before a checkout: stale plans are dropped. */
  async acquired(): Promise<void> {
    if (!this.#parsed) return;
    if (this.needsCleanup()) {
      this.#forgetAll();
      await this.client.query('DEALLOCATE ALL');
      this.#stale = false;
    }
    this.#epoch = this.owner.schemaEpoch;
    this.#suspended = false;
    this.#ranDdl = false;
  }

  async #execute(text: string, values: unknown[]): Promise<QueryResult> {
    try {
      return await this.#executeNow(text, values);
    } finally {
      if (--this.#inFlight === 0) this.#tail = SETTLED;
    }
  }

  async #executeNow(text: string, values: unknown[]): Promise<QueryResult> {
    if (!this.#parsed) return submitQuery(this.client, text, values);
    if (values.length === 0) {
      if (BEGIN.test(text) && !this.#beginHeld && this.client.getTransactionStatus() === 'I') {
        this.#beginHeld = true;
        return notSent('BEGIN');
      }
      if (this.#beginHeld && END.test(text)) {
        this.#beginHeld = false;
        return notSent(text.trim().replace(/;$/, '').toUpperCase());
      }
    }
    const preparedName = this.owner.nameOf(text, values.length);
    if (preparedName === null) {
      if (DDL.test(text)) {
        this.#suspended = true;
        this.#ranDdl = true;
        this.owner.schemaEpoch++;
      } else if (DEALLOCATING.test(text)) {
        this.#forgetAll();
        this.#suspended = true;
      }
      return this.#send(text, values);
    }
    const chosen = this.#nameFor(text, preparedName);
    const name = typeof chosen === 'object' ? await chosen : chosen;
    if (!name) return this.#send(text, values);
    const wasPrepared = this.#prepared.has(name);
    // Decided before sending: pg fails the query on PostgreSQL's ErrorResponse, and the status it
    // reports is the last ReadyForQuery's, which may not have been read yet. With a held BEGIN that
    // would still say idle ('I') although the statement failed inside the transaction.
    const inTransaction = this.#beginHeld || this.client.getTransactionStatus() !== 'I';
    try {
      const result = await this.#send(text, values, name);
      this.#prepared.add(name);
      return result;
    } catch (error) {
      // Parsed, then failed in Bind or Execute (a constraint, a bad value): it exists all the same.
      if (!wasPrepared && this.#parsed[name] === text) this.#prepared.add(name);
      const code = sqlState(error);
      const stale =
        (wasPrepared && (code === STALE_PLAN || code === NO_SUCH_STATEMENT)) || (!wasPrepared && code === DUPLICATE_STATEMENT);
      if (!stale) throw error;
      // Whatever made this plan stale (DDL elsewhere) may have hit the other connections too.
      if (code === STALE_PLAN) this.owner.schemaEpoch++;
      this.#forgetAll(); // and the server may hold names pg no longer knows: DEALLOCATE ALL below or on acquire
      if (inTransaction) {
        // The error aborted the transaction; clean up when the connection is next acquired.
        this.#suspended = true;
        throw error;
      }
      // Outside a transaction the failed statement had no effect: clean up and run it once, unnamed.
      await this.client.query('DEALLOCATE ALL');
      this.#stale = false;
      this.#epoch = this.owner.schemaEpoch;
      return this.client.query(text, values);
    }
  }

  /**
   * Sends a statement, with the held BEGIN in front of it when there is one: in the same write when
   * pg uses the extended protocol for it anyway and needs no Parse of a named statement (pg's
   * record of parsed names is `#parsed`; see begin-with-statement.ts), else on its own first.
   */
  #send(text: string, values: unknown[], name?: string): Promise<QueryResult> {
    if (this.#beginHeld) {
      this.#beginHeld = false;
      const combines = name ? this.#parsed![name] !== undefined : values.length > 0;
      if (combines) return queryAfterBegin(this.client, text, values, name);
      return this.client.query('BEGIN').then(() => this.#send(text, values, name));
    }
    return submitQuery(this.client, text, values, name);
  }

  /**
   * The name to send `text` under, or undefined to send it unnamed; a promise only when room must
   * be made first (no extra await on the common path).
   */
  #nameFor(text: string, name: string): string | undefined | Promise<string | undefined> {
    const parsed = this.#parsed!;
    if (this.#suspended) return undefined;
    if (this.#prepared.has(name)) {
      // pg's record disagrees (a hash collision, or someone else's use of the name): leave it alone.
      if (parsed[name] !== text) return undefined;
      this.#prepared.delete(name);
      this.#prepared.add(name); // most recently used
      return name;
    }
    if (parsed[name] !== undefined) return undefined; // not ours
    if (this.owner.recordUse(name) < this.owner.minUses) return undefined;
    const status = this.client.getTransactionStatus();
    if (status !== 'I' && status !== 'T') return undefined; // a failed transaction: nothing would be parsed
    return this.#prepared.size < this.owner.maxPerConnection ? name : this.#makeRoomFor(name);
  }

  /** Deallocates least recently used statements until `name` fits; undefined if that failed. */
  async #makeRoomFor(name: string): Promise<string | undefined> {
    const parsed = this.#parsed!;
    while (this.#prepared.size >= this.owner.maxPerConnection) {
      const oldest = this.#prepared.values().next().value as string;
      this.#prepared.delete(oldest);
      delete parsed[oldest];
      try {
        // Queued on this client before the statement that needs the room; nothing else of ours is
        // in flight on it (calls are serialised), so no queued query can still expect `oldest`.
        await this.client.query(`DEALLOCATE ${quoteIdent(oldest)}`);
      } catch {
        // E.g. the transaction failed meanwhile: it may still exist, so drop everything on acquire.
        this.#stale = true;
        this.#suspended = true;
        return undefined;
      }
    }
    return name;
  }

  /** Removes all our names from pg's record; the server may still hold them until DEALLOCATE ALL. */
  #forgetAll(): void {
    for (const name of this.#prepared) delete this.#parsed![name];
    this.#prepared.clear();
    this.#stale = true;
  }
}

const SETTLED: Promise<unknown> = Promise.resolve();

/** The answer to a transaction command that was not sent (a held BEGIN, or the end of an empty transaction). */
function notSent(command: string): QueryResult {
  return { command, rowCount: null, oid: 0, rows: [], fields: [] };
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}
