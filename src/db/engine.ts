/**
 * The storage engine contract. Two implementations share it — a PostgreSQL server
 * (`postgres-engine.ts`, one PostgreSQL database per FieldForge database) and embedded PGlite
 * (`pglite-engine.ts`, one data directory per FieldForge database) — and they speak the same SQL,
 * so everything above this file is engine-agnostic.
 */
import type { SqlExecutor } from './sql-executor.js';

/** Called once for every SQL statement a database executes (used by query-budget tests). */
/** What a statement listener learns besides the text: its parameters and its round trip (ms). */
export interface StatementDetail {
  readonly parameters: readonly unknown[];
  readonly durationMs?: number;
}

export type StatementListener = (sql: string, detail?: StatementDetail) => void;

/** Called with the name of a database that no longer exists (dropped here, or found gone). */
export type DatabaseGoneListener = (name: string) => void;

/** An open FieldForge database: a bounded connection pool behind a Kysely instance. */
export interface TenantDatabase {
  readonly name: string;
  /** Executes through the pool; use `transaction` for a unit of work. */
  readonly executor: SqlExecutor;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws (Kysely's
   * `transaction().execute`; on PostgreSQL without Kysely's executor, `direct-statements.ts`).
   */
  transaction<T>(fn: (trx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Number of SQL statements executed through this handle since it was opened. */
  readonly statementCount: number;
  /** Subscribes to executed statements; returns the unsubscribe function. */
  onStatement(listener: StatementListener): () => void;
}

export interface Engine {
  readonly kind: 'postgres' | 'pglite';
  /** Names of the FieldForge databases, sorted. */
  list(): Promise<string[]>;
  exists(name: string): Promise<boolean>;
  /** Creates an empty database. Throws `BadRequest` for an invalid name, `ValidationError` if it exists. */
  create(name: string): Promise<void>;
  /** Closes the database's pool, then removes it. Throws `DatabaseNotFound` if absent. */
  drop(name: string): Promise<void>;
  /** Copies `source` (schema and data) into a new database `target`. */
  clone(source: string, target: string): Promise<void>;
  /** Opens (or returns the already-open) database. Throws `DatabaseNotFound` if absent. */
  open(name: string): Promise<TenantDatabase>;
  /**
   * Subscribes to databases going away: dropped through this engine, or — PostgreSQL — found
   * missing by a connection attempt after another process dropped them. Returns the unsubscribe.
   */
  onDatabaseGone(listener: DatabaseGoneListener): () => void;
  /** Closes one database's pool if open (no-op otherwise). */
  closeDatabase(name: string): Promise<void>;
  /** Closes every pool and the engine's own connections. */
  close(): Promise<void>;
}
