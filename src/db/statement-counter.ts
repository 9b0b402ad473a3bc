/**
 * Counts the SQL statements a database handle executes and fans them out to listeners. Both
 * engines plug `logger` into Kysely's `log` option, which sees every statement run through the
 * Kysely instance — including the `begin`/`commit`/`rollback` Kysely issues for transactions, and
 * failed statements (they were still sent to the server).
 */
import type { LogEvent } from 'kysely';
import type { StatementListener } from './engine.js';

export class StatementCounter {
  #count = 0;
  readonly #listeners = new Set<StatementListener>();

  get count(): number {
    return this.#count;
  }

  /**
   * Pass as Kysely's `log` option. Listeners run synchronously after the statement; a listener that
   * throws makes the statement's promise reject (useful for a query budget that fails fast).
   */
  readonly logger = (event: LogEvent): void => {
    this.record(event.query.sql, event.query.parameters, event.queryDurationMillis);
  };

  record(sql: string, parameters: readonly unknown[] = [], durationMs?: number): void {
    this.#count++;
    for (const listener of this.#listeners) listener(sql, { parameters, durationMs });
  }

  /** Subscribes; returns the unsubscribe function (idempotent). */
  on(listener: StatementListener): () => void {
    // Wrap so subscribing the same function twice yields two independent subscriptions.
    const entry: StatementListener = (sql, detail) => listener(sql, detail);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }
}
