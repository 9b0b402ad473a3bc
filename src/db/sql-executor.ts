/**
 * Where statements run, as code above `src/db` sees it: a database's pool, one of its connections
 * or a transaction. The engines make these (Kysely instances underneath); everything else builds
 * its SQL with the one `sql` tag (`sql-fragment.ts`) and runs it with `fragment.execute(executor)`,
 * so Kysely stays an engine detail and no file outside `src/db` imports it.
 */
import type { QueryExecutor } from 'kysely';

export interface SqlExecutor {
  /** Statements share one connection and commit together (a transaction, not the pool). */
  readonly isTransaction: boolean;
  /** A transaction of its own (not on a transaction): committed when `fn` resolves, rolled back when it throws. */
  transaction(): { execute<T>(fn: (trx: SqlExecutor) => Promise<T>): Promise<T> };
  /** One connection held for the whole of `fn` (session-level locks and settings). */
  connection(): { execute<T>(fn: (connection: SqlExecutor) => Promise<T>): Promise<T> };
  /** The engine's executor, for `SqlFragment.execute` where no direct runner serves it (src/db only). */
  getExecutor(): QueryExecutor;
}
