/**
 * The pool Kysely sees for one PostgreSQL database (around `pg.Pool` or `PreparingPool`): it
 * turns the failures of its own connections into what they mean for a request, at the one place
 * that knows they came from the database and not from some other socket.
 *
 * - The database is gone (connecting answers 3D000 "database … does not exist": dropped or
 *   renamed, by any process): `onMissing` runs — the engine closes this pool and forgets the
 *   database — and this and every later checkout answer `DatabaseNotFound`, without a round trip.
 * - The server is out of reach (refused, restarting, shut down, connection killed mid-statement):
 *   `DatabaseUnavailable`. pg-pool discards broken connections by itself, so once the server is
 *   back the next checkout simply connects again.
 *
 * Statement errors (constraints, timeouts, deadlocks, the request guard) pass through raw.
 */
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import { DatabaseNotFound } from '../errors.js';
import { connectionFailure, isMissingDatabase } from './database-errors.js';

export class TranslatingPool implements PostgresPool {
  readonly #clients = new WeakMap<PostgresPoolClient, TranslatingClient>();
  #missing = false;

  constructor(
    readonly inner: PostgresPool,
    readonly database: string,
    /** Called once when connecting shows the database no longer exists. */
    private readonly onMissing: () => void,
  ) {}

  /** True once a connection attempt found the database gone. */
  get missing(): boolean {
    return this.#missing;
  }

  connect(): Promise<PostgresPoolClient> {
    if (this.#missing) return Promise.reject(this.#notFound());
    // `then`, not `await`: a checkout is on every statement's path, and each await is a promise more.
    return this.inner.connect().then((client) => {
      let wrapper = this.#clients.get(client);
      if (!wrapper) {
        wrapper = new TranslatingClient(client);
        this.#clients.set(client, wrapper);
      }
      return wrapper;
    }, (error: unknown) => {
      if (isMissingDatabase(error)) {
        if (!this.#missing) {
          this.#missing = true;
          this.onMissing();
        }
        throw Object.assign(this.#notFound(), { cause: error });
      }
      throw connectionFailure(error) ?? error;
    });
  }

  end(): Promise<void> {
    return this.inner.end();
  }

  #notFound(): DatabaseNotFound {
    return new DatabaseNotFound(`Database "${this.database}" does not exist`);
  }
}

/**
 * The client under one of this pool's connections, for a caller that translates statement errors
 * itself (`direct-statements.ts`, with `connectionFailure`): one promise less per statement.
 */
export function untranslatedClient(client: PostgresPoolClient): PostgresPoolClient {
  return client instanceof TranslatingClient ? client.client : client;
}

class TranslatingClient implements PostgresPoolClient {
  constructor(readonly client: PostgresPoolClient) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(sqlOrCursor: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): unknown {
    if (typeof sqlOrCursor !== 'string') return this.client.query(sqlOrCursor); // streaming: as pg gives it
    return this.client.query<R>(sqlOrCursor, parameters ?? []).catch((error: unknown) => {
      throw connectionFailure(error) ?? error;
    });
  }

  release(): void {
    this.client.release();
  }
}
