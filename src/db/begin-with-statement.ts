/**
 * A transaction's BEGIN sent in the same write as its first statement. Kysely opens a transaction
 * with `begin` as a statement of its own: one round trip (a socket write, PostgreSQL's reply, a read)
 * before any work, which was a measurable share of a one-record create (issue 15). `PreparingPool`
 * (prepared-statements.ts) holds the BEGIN back and sends it here, in front of the statement:
 *
 *   Parse/Bind/Execute `BEGIN` (unnamed, no Sync) · the statement's Parse?/Bind/Describe/Execute · Sync
 *
 * PostgreSQL runs the messages in order; BEGIN turns the implicit block of the extended protocol
 * into an explicit transaction, so Sync leaves it open ('T', or 'E' when the statement failed:
 * nothing runs after an error until Sync), exactly as if BEGIN had gone first on its own.
 *
 * This is pg's own `Query` (a documented `Submittable`), with BEGIN's messages written before its
 * own and BEGIN's CommandComplete left out of the result. Only for a statement that pg sends with
 * the extended protocol anyway (parameters or a name) and that needs no Parse of a named
 * statement: pg records a named statement as parsed on the first ParseComplete it sees, which
 * would be BEGIN's.
 */
import type pg from 'pg';
import { PgQuery, submitQuery, type WireConnection } from './pg-query.js';

class QueryAfterBegin extends PgQuery {
  #beginCompleted = false;

  override submit(connection: WireConnection): Error | null {
    // Corked, so BEGIN's messages and the statement's leave in one write (pg corks its own part too).
    connection.stream.cork?.();
    try {
      connection.parse({ text: 'BEGIN' });
      connection.bind({});
      connection.execute({});
      return super.submit(connection);
    } finally {
      connection.stream.uncork?.();
    }
  }

  override handleCommandComplete(message: unknown, connection: WireConnection): void {
    // The first CommandComplete is BEGIN's: not part of the statement's result.
    if (!this.#beginCompleted) {
      this.#beginCompleted = true;
      return;
    }
    super.handleCommandComplete(message, connection);
  }
}

/**
 * Runs BEGIN and the statement in one round trip. Only for a statement with parameters, or a named
 * statement already parsed on this connection (the caller, `PreparingPool`, knows which).
 */
export function queryAfterBegin(client: pg.PoolClient, text: string, values: unknown[], name?: string): Promise<pg.QueryResult> {
  return submitQuery(client, text, values, name, QueryAfterBegin);
}
