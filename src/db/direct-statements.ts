/**
 * Flat SQL (`SqlFragment`: text and values, already compiled) sent straight to a PostgreSQL pool's
 * connections, beside Kysely rather than through it. Kysely's executor wraps each statement in a
 * dozen async layers — connection provider, runtime driver, its logging, the dialect's connection,
 * plugin result transforms — about 15 promises per statement, each paying AsyncLocalStorage's
 * promise hooks: a measurable share of a one-record fetch or create (issue 15). The ORM builds all
 * its statements as fragments, so they take this path; Kysely's builders and `sql` keep working on
 * the same connections, in the same transaction, counted the same way.
 *
 * - On the pool (`run`): a connection is checked out for the statement and released after, as
 *   Kysely does for a statement outside a transaction.
 * - In a transaction (`transaction`): one connection for the whole unit of work, with BEGIN, COMMIT
 *   or ROLLBACK sent as Kysely sends them (so `PreparingPool` still holds BEGIN back for the first
 *   statement). The unit of work's executor is that connection itself (`TransactionConnection`):
 *   a fragment run on it goes straight to it (`directRunner`), and Kysely's executor over it is
 *   made only if something asks for it. Building a Kysely `Transaction` and its executor for every
 *   unit of work was allocation a one-record create paid for nothing (issue 29).
 *
 * Statements are counted as Kysely's `log` counts them (after each one, failed ones too; a listener
 * that throws fails the statement), so statement budgets do not depend on the path taken.
 */
import { SingleConnectionProvider, type DatabaseConnection, type Kysely, type PostgresPool, type PostgresPoolClient, type QueryExecutor, type QueryResult, type CompiledQuery } from 'kysely';
import type { SqlExecutor } from './sql-executor.js';
import { connectionFailure } from './database-errors.js';
import type { StatementCounter } from './statement-counter.js';
import { runsAlone } from './prepared-statements.js';
import { untranslatedClient } from './translating-pool.js';

/** How a statement is run. */
export interface StatementOptions {
  /**
   * The caller's unit of work will run nothing else: when it is the transaction's first
   * statement, it is sent without BEGIN and commits by itself (`PreparingClient.queryAlone`).
   */
  readonly alone?: boolean;
}

/** Runs one statement of flat SQL where it belongs (the pool, or a transaction's connection). */
export interface DirectRunner {
  run<R>(text: string, values: readonly unknown[], options?: StatementOptions): Promise<QueryResult<R>>;
  /** A transaction that has sent nothing yet: its next statement can run `alone` (false on the pool). */
  readonly sentNothing: boolean;
}

/** The direct runner behind a Kysely instance (its pool, or a transaction from `transaction`). */
const runners = new WeakMap<object, DirectRunner>();

/** The runner that sends statements for `db` straight to its connections; undefined: use Kysely. */
export function directRunner(db: object): DirectRunner | undefined {
  return runners.get(db);
}

/**
 * Whether `db` is a transaction that has sent nothing yet, whose next statement would therefore run
 * `alone` (without BEGIN, committing by itself). False for the pool and for Kysely's own transactions.
 */
export function sendsNextAlone(db: object): boolean {
  return runners.get(db)?.sentNothing === true;
}

/** Kysely's result of a statement: the rows, and for a write the number of rows it touched. */
function kyselyResult<R>(result: { command: string; rowCount: number | null; rows: R[] }): QueryResult<R> {
  const { command, rowCount, rows } = result;
  const writes = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return writes ? { rows: rows ?? [], numAffectedRows: BigInt(rowCount ?? 0) } : { rows: rows ?? [] };
}

/**
 * Runs `text` on `client` (untranslated: a lost connection becomes `DatabaseUnavailable` here, as
 * `TranslatingPool`'s clients do), releases the checkout when there is one, and counts the
 * statement as Kysely's runtime driver logs it.
 */
async function counted<R>(
  client: PostgresPoolClient, counter: StatementCounter, text: string, values: readonly unknown[], checkout?: PostgresPoolClient, alone = false,
): Promise<QueryResult<R>> {
  let result;
  const started = performance.now();
  try {
    result = await (alone && runsAlone(client) ? client.queryAlone<R>(text, values) : client.query<R>(text, values as unknown[]));
  } catch (error) {
    counter.record(text, values, performance.now() - started);
    throw connectionFailure(error) ?? error;
  } finally {
    checkout?.release();
  }
  counter.record(text, values, performance.now() - started); // a listener that throws fails the statement (query budgets)
  return kyselyResult<R>(result as { command: string; rowCount: number | null; rows: R[] });
}

export class DirectStatements implements DirectRunner {
  constructor(
    private readonly pool: PostgresPool,
    private readonly counter: StatementCounter,
    /** The Kysely instance over the same pool (its executor serves the transactions' Kysely). */
    private readonly kysely: Kysely<any>,
  ) {
    runners.set(kysely, this);
  }

  run<R>(text: string, values: readonly unknown[]): Promise<QueryResult<R>> {
    return this.pool.connect().then((client) => counted<R>(untranslatedClient(client), this.counter, text, values, client));
  }

  /** On the pool every statement commits by itself anyway: there is no transaction to spare. */
  get sentNothing(): boolean {
    return false;
  }

  /**
   * Runs `fn` in one transaction on one connection: committed when it resolves, rolled back when
   * it throws (Kysely's `transaction().execute` semantics, BEGIN and COMMIT counted alike).
   */
  async transaction<T>(fn: (trx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const connection = new TransactionConnection(untranslatedClient(client), this.counter, this.kysely);
    runners.set(connection, connection);
    try {
      await connection.run('begin', []);
      let result: T;
      try {
        result = await fn(connection);
        await connection.run('commit', []);
      } catch (error) {
        await connection.run('rollback', []);
        throw error;
      }
      return result;
    } finally {
      connection.end();
      client.release();
    }
  }
}

/**
 * A transaction's connection: the unit of work's executor (`SqlExecutor`), running fragments
 * (`run`) and, for Kysely's executor when one is asked for, compiled queries (`executeQuery`).
 */
class TransactionConnection implements DirectRunner, DatabaseConnection, SqlExecutor {
  #ended = false;
  #executor: QueryExecutor | undefined;

  constructor(
    private readonly client: PostgresPoolClient,
    private readonly counter: StatementCounter,
    private readonly kysely: Kysely<any>,
  ) {}

  get isTransaction(): boolean {
    return true;
  }

  /** As on Kysely's `Transaction`: a transaction does not nest (savepoints do, `UnitOfWork`). */
  transaction(): never {
    throw new Error('calling the transaction method for a Transaction is not supported');
  }

  connection(): never {
    throw new Error('calling the connection method for a Transaction is not supported');
  }

  getExecutor(): QueryExecutor {
    return (this.#executor ??= this.kysely.getExecutor().withConnectionProvider(new SingleConnectionProvider(this)));
  }

  run<R>(text: string, values: readonly unknown[], options?: StatementOptions): Promise<QueryResult<R>> {
    // The connection is back in the pool, maybe another request's: never send anything on it.
    if (this.#ended) return Promise.reject(new Error('Transaction is already committed or rolled back'));
    return counted<R>(this.client, this.counter, text, values, undefined, options?.alone === true);
  }

  get sentNothing(): boolean {
    return !this.#ended && runsAlone(this.client) && this.client.sentNothing;
  }

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return this.run<R>(compiledQuery.sql, compiledQuery.parameters);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming is not configured for this database (no cursor in its dialect)');
  }

  end(): void {
    this.#ended = true;
  }
}
