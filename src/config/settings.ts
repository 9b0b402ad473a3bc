/**
 * Settings from the environment (ARCHITECTURE §2), read and validated once at start-up.
 */
import { resolve } from 'node:path';

export interface Settings {
  databaseUrl: string | undefined;
  dataDir: string;
  redisUrl: string | undefined;
  /** Prefix of the bus channel and presence keys in Redis (`FF_REDIS_PREFIX`), for deployments sharing one Redis. */
  redisPrefix: string;
  /**
   * The realtime socket's bounds: per socket `FF_WS_MAX_FRAME` bytes, `FF_WS_RATE` frames/s,
   * `FF_WS_FLOOD_SECONDS`, `FF_WS_MAX_WATCHES` records; open sockets per user and per API key over
   * all workers (`FF_WS_MAX_SOCKETS_PER_USER`, `FF_WS_MAX_SOCKETS_PER_KEY`).
   */
  socket: {
    maxFrameBytes: number; framesPerSecond: number; floodSeconds: number; maxWatches: number;
    maxSocketsPerUser: number; maxSocketsPerKey: number;
  };
  secret: string | undefined;
  addonsPaths: string[];
  dev: boolean;
  port: number;
  host: string;
  /** Connections per database pool (`FF_DB_POOL_MAX`). */
  poolMax: number;
  /**
   * The worker's PostgreSQL connections, every database together (`FF_PG_MAX_CONNECTIONS`), how
   * long a request waits for one when all are in use (`FF_PG_CONNECT_WAIT`, seconds) and how many
   * may wait at once (`FF_PG_QUEUE_MAX`); see `db/connection-budget.ts`.
   */
  pgConnections: { max: number; waitMs: number; queueMax: number };
  /** Named prepared statements for repeated DML (`FF_PG_PREPARE=0` turns them off, e.g. for PgBouncer < 1.21). */
  pgPrepare: boolean;
  /** Largest accepted request body, bytes. */
  bodyLimit: number;
  /** Access-token lifetime in hours. */
  sessionHours: number;
  /** Where file bytes live: `file:<dir>` or `s3://<bucket>[/<prefix>]` (`files/filestore-config.ts`). */
  filestore: string;
  /** Largest accepted file upload (decoded bytes); larger → 413. */
  uploadLimit: number;
  /** Largest import body (`/api/import`, JSON) and import-preview file, bytes (`FF_IMPORT_LIMIT`). */
  importLimit: number;
  /** Longest one SQL statement of a request may run, milliseconds (`FF_STATEMENT_TIMEOUT`, seconds; 0 = no limit). */
  statementTimeoutMs: number;
  /** Longest one statement of a request may wait for a lock, milliseconds (`FF_LOCK_TIMEOUT`, seconds; 0 = no limit). */
  lockTimeoutMs: number;
  /**
   * Log level of the server (`FF_LOG_LEVEL`: fatal, error, warn, info, debug, trace, silent);
   * `info` by default, `debug` (access lines too) with `FF_DEV=1`.
   */
  logLevel: LogLevel;
  /** Most records one bulk call, clone or selection may cover (`FF_BULK_MAX`). */
  bulkMax: number;
  /** `json` (one object per line, for log collectors) or `pretty` (for people) — `FF_LOG_FORMAT`. */
  logFormat: 'json' | 'pretty';
  /**
   * Origins a Web Push endpoint may have although not `https:` on a public address
   * (`FF_PUSH_ALLOWED_ORIGINS`, comma-separated; CONTRACTS C5). Read here to refuse a malformed
   * list at start-up; the push guard reads the variable itself, through `pushAllowedOrigins`.
   */
  pushAllowedOrigins: string[];
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const port = Number(env.PORT ?? 8000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got '${env.PORT}'`);
  const socketsPerUser = positiveInteger('FF_WS_MAX_SOCKETS_PER_USER', env.FF_WS_MAX_SOCKETS_PER_USER, 50);
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.FF_DATA_DIR || './data'),
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.FF_REDIS_PREFIX || 'ff:',
    socket: {
      maxFrameBytes: positiveInteger('FF_WS_MAX_FRAME', env.FF_WS_MAX_FRAME, 64 * 1024),
      framesPerSecond: positiveInteger('FF_WS_RATE', env.FF_WS_RATE, 50),
      floodSeconds: positiveInteger('FF_WS_FLOOD_SECONDS', env.FF_WS_FLOOD_SECONDS, 3),
      maxWatches: positiveInteger('FF_WS_MAX_WATCHES', env.FF_WS_MAX_WATCHES, 200),
      maxSocketsPerUser: socketsPerUser,
      // Unset, a key may hold as many as its user: raising the user limit raises the key's too.
      maxSocketsPerKey: positiveInteger('FF_WS_MAX_SOCKETS_PER_KEY', env.FF_WS_MAX_SOCKETS_PER_KEY, socketsPerUser),
    },
    secret: env.FF_SECRET || undefined,
    addonsPaths: (env.FF_ADDONS_PATH ?? '').split(':').filter(Boolean).map((p) => resolve(p)),
    dev: env.FF_DEV === '1',
    port,
    host: env.HOST || '127.0.0.1',
    poolMax: positiveInteger('FF_DB_POOL_MAX', env.FF_DB_POOL_MAX, 10),
    pgConnections: {
      max: positiveInteger('FF_PG_MAX_CONNECTIONS', env.FF_PG_MAX_CONNECTIONS, 20),
      waitMs: positiveSeconds('FF_PG_CONNECT_WAIT', env.FF_PG_CONNECT_WAIT, 10),
      queueMax: positiveInteger('FF_PG_QUEUE_MAX', env.FF_PG_QUEUE_MAX, 1000),
    },
    pgPrepare: env.FF_PG_PREPARE !== '0',
    bodyLimit: Number(env.FF_BODY_LIMIT ?? 16 * 1024 * 1024),
    sessionHours: positiveNumber('FF_SESSION_HOURS', env.FF_SESSION_HOURS, 8),
    filestore: env.FF_FILESTORE || `file:${resolve(env.FF_DATA_DIR || './data', 'filestore')}`,
    uploadLimit: positiveNumber('FF_UPLOAD_LIMIT', env.FF_UPLOAD_LIMIT, 25 * 1024 * 1024),
    importLimit: positiveNumber('FF_IMPORT_LIMIT', env.FF_IMPORT_LIMIT, 100 * 1024 * 1024),
    bulkMax: positiveInteger('FF_BULK_MAX', env.FF_BULK_MAX, 10_000),
    statementTimeoutMs: seconds('FF_STATEMENT_TIMEOUT', env.FF_STATEMENT_TIMEOUT, 30),
    lockTimeoutMs: seconds('FF_LOCK_TIMEOUT', env.FF_LOCK_TIMEOUT, 10),
    logLevel: oneOf('FF_LOG_LEVEL', env.FF_LOG_LEVEL, LOG_LEVELS, env.FF_DEV === '1' ? 'debug' : 'info'),
    logFormat: oneOf('FF_LOG_FORMAT', env.FF_LOG_FORMAT, ['json', 'pretty'] as const, 'json'),
    pushAllowedOrigins: [...pushAllowedOrigins(env.FF_PUSH_ALLOWED_ORIGINS)],
  };
}

/** `FF_PUSH_ALLOWED_ORIGINS` as exact origins (`http://127.0.0.1:9555`); a path after an origin is ignored. */
export function pushAllowedOrigins(raw: string | undefined): Set<string> {
  return new Set((raw ?? '').split(',').map((o) => o.trim()).filter(Boolean).map((o) => {
    let url: URL | null = null;
    try {
      url = new URL(o);
    } catch { /* refused below */ }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new Error(`FF_PUSH_ALLOWED_ORIGINS: '${o}' is not an origin such as https://push.example.com or http://127.0.0.1:9555`);
    }
    return url.origin;
  }));
}

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got '${raw}'`);
  return value;
}

/** A duration given in seconds (decimals allowed, 0 = no limit), as whole milliseconds. */
function seconds(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number of seconds (0 = no limit), got '${raw}'`);
  return Math.round(value * 1000);
}

/** A positive duration given in seconds (decimals allowed), as whole milliseconds. */
function positiveSeconds(name: string, raw: string | undefined, fallback: number): number {
  return Math.max(1, Math.round(positiveNumber(name, raw, fallback) * 1000));
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return value as T;
}

function positiveNumber(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got '${raw}'`);
  return value;
}
