/**
 * pg's own `Query`, made from the text and sent with a callback: `client.query`'s promise form
 * copies the config object property by property (`cloneQueryConfig`) and chains a second promise
 * to rewrite the error's stack, a measurable share of a one-statement request (issue 15).
 */
import pg from 'pg';

/** What pg's connection offers a Query while it is submitted (the protocol messages it writes). */
export interface WireConnection {
  stream: { cork?(): void; uncork?(): void };
  parse(query: { text: string; name?: string }): void;
  bind(config: { portal?: string; statement?: string; values?: unknown[] }): void;
  execute(config: { portal?: string; rows?: number }): void;
}

export type QueryCallback = (error: Error | null, result: pg.QueryResult) => void;

/**
 * pg's Query as its runtime has it: made from text, values and a callback, with its protocol
 * methods (its typings know only the config form and leave those out).
 */
export const PgQuery = pg.Query as unknown as new (text: string, values: unknown[], callback: QueryCallback) => {
  name?: string;
  submit(connection: WireConnection): Error | null;
  handleCommandComplete(message: unknown, connection: WireConnection): void;
};

/** Runs `text` on `client` as a `Query` (pg's own, or a subclass), named when `name` is given. */
export function submitQuery(client: pg.PoolClient, text: string, values: unknown[], name?: string, Query = PgQuery): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const query = new Query(text, values, (error, result) => (error ? reject(error) : resolve(result)));
    if (name) query.name = name; // read when the query is sent, not when it is made
    client.query(query as unknown as pg.Submittable);
  });
}
