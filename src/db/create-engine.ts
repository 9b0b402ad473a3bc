/**
 * Chooses the storage engine from configuration: a PostgreSQL server when a database URL is
 * configured, otherwise embedded PGlite under the data directory (zero-setup default).
 */
import type { Engine } from './engine.js';
import { PgliteEngine } from './pglite-engine.js';
import { PostgresEngine } from './postgres-engine.js';

export interface CreateEngineOptions {
  /** PostgreSQL URL; its path names the maintenance database (default `postgres`). */
  databaseUrl?: string;
  /** Root for PGlite databases (ignored when `databaseUrl` is set). */
  dataDir: string;
  /** Connections per open database (PostgreSQL only; PGlite is a single connection). */
  poolMax?: number;
  /** PostgreSQL connections of all databases together, the wait for one and the queue (`connection-budget.ts`). */
  connections?: { max: number; waitMs: number; queueMax: number };
  /** Named prepared statements for repeated DML (PostgreSQL only; default true). */
  prepareStatements?: boolean;
  /** Longest one statement may run, milliseconds (unset or 0: no limit; not enforced by PGlite). */
  statementTimeoutMs?: number;
  /** Longest one statement may wait for a lock, milliseconds (unset or 0: no limit). */
  lockTimeoutMs?: number;
}

export function createEngine(options: CreateEngineOptions): Engine {
  const { statementTimeoutMs, lockTimeoutMs } = options;
  if (options.databaseUrl) {
    return new PostgresEngine({
      url: options.databaseUrl, poolMax: options.poolMax, prepareStatements: options.prepareStatements, statementTimeoutMs, lockTimeoutMs,
      maxConnections: options.connections?.max, connectionWaitMs: options.connections?.waitMs, connectionQueueMax: options.connections?.queueMax,
    });
  }
  return new PgliteEngine({ dataDir: options.dataDir, statementTimeoutMs, lockTimeoutMs });
}
