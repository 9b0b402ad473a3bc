/**
 * What a failure of the database means for the caller: the one translation of PostgreSQL's
 * errors (server and PGlite alike) into the error catalogue, so that no database failure reaches
 * a client as a 500.
 *
 * - Integrity (SQLSTATE class 23: unique, not-null, foreign key, RESTRICT, check, exclusion) and
 *   bad values (22xxx) → `ValidationError` naming the model, fields or constraint. The model and
 *   field names come from `ConstraintDescriptions` (the registry, which this layer must not import);
 *   without them the table, column and constraint names PostgreSQL reports are used.
 * - A unique (or exclusion) violation says the value cannot be used and names no other record:
 *   the record holding the value may be one the caller cannot read (another company's, hidden by
 *   a record rule), and this layer cannot tell, so the answer is the same whoever holds it (issue
 *   25 item 6). That a value is refused at all is the one thing a key unique across the table
 *   cannot hide (docs/decisions.md).
 * - The database server gone (class 08, 57P01-57P03) → `DatabaseUnavailable` (503, Retry-After); up
 *   but out of connection slots (53300) or another limit (53400) → `DatabaseBusy` (503, Retry-After),
 *   saying which. Socket-level failures (refused, reset, "Connection terminated unexpectedly")
 *   carry no SQLSTATE and look like any other network error, so only the engine, which knows they
 *   came from its own connections, turns them into `DatabaseUnavailable` (`connectionFailure`).
 * - The database itself gone (3D000) → `DatabaseNotFound`; the engine also closes its pool.
 * - Limits: statement timeout (57014) → `StatementTimeout`; lock timeout (55P03), deadlock (40P01),
 *   serialization failure (40001) → `DatabaseBusy` (503, Retry-After). Installer code that retries
 *   those reads the raw SQLSTATE: they are translated only when they leave a request.
 */
import {
  DatabaseBusy, DatabaseNotFound, DatabaseUnavailable, FieldForgeError, StatementTimeout, ValidationError,
} from '../errors.js';

/** Names of our own constraints, tables and columns as the model layer knows them. */
export interface ConstraintDescriptions {
  /**
   * The model (verbose name) and fields behind a constraint we declared, its message if it has one,
   * and for a link's foreign key the model it points to (its name).
   */
  constraint(name: string): { model: string; fields: readonly string[]; message?: string; target?: string } | undefined;
  /** The verbose name of the model stored in `table`. */
  model(table: string): string | undefined;
  /** The name of the model stored in `table` (`ProjectTag`), for the error body's `field` owner. */
  modelName?(table: string): string | undefined;
  /** The field stored in `column` of `table`. */
  field(table: string, column: string): string | undefined;
}

/** The fields of a PostgreSQL error report that the translation reads (pg and PGlite share them). */
interface PostgresErrorReport {
  code: string;
  message: string;
  severity?: string;
  detail?: string;
  constraint?: string;
  table?: string;
  column?: string;
}

/** The SQLSTATE of a PostgreSQL error report, or undefined for anything else (a socket error, a bug). */
export function sqlState(error: unknown): string | undefined {
  return postgresReport(error)?.code;
}

/**
 * The catalogue error a database failure stands for, or `error` itself when it is none of the
 * above (a 500 stays a 500). Catalogue errors pass through unchanged, so translating twice is safe.
 */
export function translateDatabaseError(error: unknown, names?: ConstraintDescriptions): unknown {
  const report = error instanceof FieldForgeError ? undefined : postgresReport(error);
  if (!report) return error;
  return withCause(integrityViolation(report, names) ?? invalidValue(report) ?? serverCondition(report), error);
}

/**
 * Only what the statement's data caused (class 23, bad values) as `ValidationError`s; the server's
 * conditions (timeouts, deadlocks, a lost connection) stay raw on their way up, so code that
 * retries them (the installer) still reads their SQLSTATE, and the HTTP layer translates them last.
 */
export function translateDataError(error: unknown, names: ConstraintDescriptions): unknown {
  const report = error instanceof FieldForgeError ? undefined : postgresReport(error);
  if (!report) return error;
  return withCause(integrityViolation(report, names) ?? invalidValue(report), error);
}

function withCause(translated: FieldForgeError | undefined, error: unknown): unknown {
  if (!translated) return error;
  translated.cause = error; // for logs; never rendered
  return translated;
}

/**
 * A failure of one of the engine's own connections that means the server is out of reach, as
 * `DatabaseUnavailable`, or refused it for lack of room, as `DatabaseBusy`; undefined for anything
 * else (a statement's own error, a bug).
 */
export function connectionFailure(error: unknown): DatabaseUnavailable | DatabaseBusy | undefined {
  const report = postgresReport(error);
  const refused = report && serverFull(report.code);
  if (refused) return Object.assign(refused, { cause: error });
  const lost = report
    ? isServerGone(report.code)
    : SOCKET_ERRORS.has(errorCode(error) ?? '') || CLIENT_MESSAGES.some((m) => errorMessage(error).startsWith(m))
      || aggregated(error).some((e) => SOCKET_ERRORS.has(errorCode(e) ?? ''));
  if (!lost) return undefined;
  return Object.assign(unavailable(), { cause: error });
}

/** True for the SQLSTATEs saying the database named by a connection does not exist (any more). */
export function isMissingDatabase(error: unknown): boolean {
  const code = sqlState(error);
  return code === INVALID_CATALOG_NAME || code === DATABASE_DROPPED;
}

const INVALID_CATALOG_NAME = '3D000';
const DATABASE_DROPPED = '57P04';

/**
 * Errors of Node's sockets and name resolution when the server is down or unreachable. Only the
 * engine applies them, to its own connections (the filestore's S3 client can fail the same way).
 */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN',
  'ENETUNREACH', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT', // ENOENT: a Unix socket of a stopped server
]);
/** What pg and pg-pool say when a connection died or could not be made in time. */
const CLIENT_MESSAGES = [
  'Connection terminated', // "… unexpectedly", "… due to connection timeout"
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
  'Cannot use a pool after calling end on the pool', // a pool closed under a request (LRU eviction)
];

function isServerGone(code: string): boolean {
  return (code.startsWith('08') && code !== '08P01') // connection exceptions; 08P01 is a protocol bug
    || code === '57P01' // terminating connection due to administrator command (shutdown, restart)
    || code === '57P02' // crash shutdown
    || code === '57P03'; // the database system is starting up / shutting down
}

/**
 * The server is up but refuses a connection for lack of room: out of connection slots (53300:
 * `max_connections`, the slots reserved for superusers, a role's or database's CONNECTION LIMIT)
 * or another configured limit (53400). Busy, not unavailable: the operator's fix is sizing
 * (README, "Scaling out"), the client's is to retry.
 */
function serverFull(code: string): DatabaseBusy | undefined {
  if (code === '53300') {
    return new DatabaseBusy(
      'The database server refused a connection: all its connection slots are taken (PostgreSQL 53300, too many connections); retry shortly',
    );
  }
  if (code === '53400') {
    return new DatabaseBusy('The database server refused a connection: a configured limit was exceeded (PostgreSQL 53400); retry shortly');
  }
  return undefined;
}

function unavailable(): DatabaseUnavailable {
  return new DatabaseUnavailable('The database server is unavailable (restarting or unreachable); retry shortly');
}

function serverCondition(report: PostgresErrorReport): FieldForgeError | undefined {
  const { code } = report;
  if (isServerGone(code)) return unavailable();
  const full = serverFull(code);
  if (full) return full;
  if (code === INVALID_CATALOG_NAME || code === DATABASE_DROPPED) return new DatabaseNotFound('The database does not exist');
  switch (code) {
    case '57014':
      return report.message.includes('statement timeout')
        ? new StatementTimeout(
          'A database statement of this request ran longer than the statement timeout (FF_STATEMENT_TIMEOUT) and was cancelled; '
          + 'ask for less (a narrower filter, a smaller limit) or have the operator raise FF_STATEMENT_TIMEOUT',
        )
        : new DatabaseUnavailable('A database statement of this request was cancelled by the database server (an operator or a shutdown); retry shortly');
    case '55P03':
      return new DatabaseBusy(
        'A record or table this request needed stayed locked by other work longer than the lock timeout (FF_LOCK_TIMEOUT); retry shortly',
      );
    case '40P01':
    case '40001':
      return new DatabaseBusy('This request conflicted with concurrent work on the same data and was rolled back; retry it');
    default:
      return undefined;
  }
}

/** SQLSTATE class 23, the integrity constraint violations. */
function integrityViolation(report: PostgresErrorReport, names?: ConstraintDescriptions): ValidationError | undefined {
  if (!report.code.startsWith('23')) return undefined;
  const declared = report.constraint ? names?.constraint(report.constraint) : undefined;
  const model = declared?.model ?? modelOf(report, names);
  const keyFields = () => declared?.fields ?? keyColumns(report.detail).map((c) => fieldOf(report, c, names));
  const quoted = (fields: readonly string[]) => fields.map((f) => `'${f}'`).join(', ');
  const constraint = report.constraint ? ` '${report.constraint}'` : '';
  // The refused field as data (the error body's `field`), with the model it belongs to.
  const owner = report.table ? names?.modelName?.(report.table) : undefined;
  const about = (field: string | undefined) => (field && owner ? { field, model: owner } : {});
  switch (report.code) {
    case '23505': {
      if (declared?.message) return new ValidationError(declared.message, declared.fields.length === 1 ? about(declared.fields[0]) : {});
      const fields = keyFields();
      if (fields.length > 1) {
        return new ValidationError(`${model}: the combination of ${quoted(fields)} must be unique; these values cannot be used`);
      }
      if (fields.length === 1) return new ValidationError(`${model}: ${quoted(fields)} must be unique; this value cannot be used`, about(fields[0]));
      return new ValidationError(`${model}: the values must be unique${constraint ? ` (constraint${constraint})` : ''}; these values cannot be used`);
    }
    case '23503':
      // The same SQLSTATE for both ends of a foreign key: a missing target, or (before PostgreSQL
      // 18, and for NO ACTION keys) a deleted target that is still referenced.
      if (report.detail?.includes('is still referenced')) return stillReferenced(report, declared, names);
      // Worded as the access layer words a link to a record the caller may not see (reference-checks.ts):
      // a missing and a hidden record must read the same.
      if (declared?.target && keyValue(report.detail) !== undefined) {
        return new ValidationError(`Field '${declared.fields[0]}': ${declared.target} ${keyValue(report.detail)} does not exist`, about(declared.fields[0]));
      }
      if (keyFields().length) return new ValidationError(`The record referenced by '${keyFields()[0]}' does not exist`, about(keyFields()[0]));
      return new ValidationError(`${model}: a record referenced${constraint ? ` through the key${constraint}` : ''} does not exist`);
    case '23001': // restrict_violation: PostgreSQL 18 reports an on_delete RESTRICT key this way
      return stillReferenced(report, declared, names);
    case '23502': {
      const field = fieldOf(report, report.column ?? '?', names);
      return new ValidationError(`Field '${field}' of ${model} is required`, report.column ? about(field) : {});
    }
    case '23514':
      return new ValidationError(`${model}: the values break the rule${constraint} (a check constraint)`);
    case '23P01': {
      const fields = keyFields();
      return new ValidationError(
        `${model}: ${fields.length ? `the values of ${quoted(fields)}` : 'the values'} cannot be used: they break the exclusion constraint${constraint}`,
      );
    }
    default: // 23000 and any code PostgreSQL adds to the class later
      return new ValidationError(`${model}: the change breaks an integrity rule${constraint}`);
  }
}

/** A delete or key change refused because other records still refer to the record (on_delete RESTRICT). */
function stillReferenced(
  report: PostgresErrorReport,
  declared: { model: string; fields: readonly string[] } | undefined,
  names: ConstraintDescriptions | undefined,
): ValidationError {
  // PostgreSQL reports the referencing table (the one holding the key) in `table`.
  const referencing = declared?.model ?? modelOf(report, names);
  const through = declared ? ` through '${declared.fields[0]}'` : report.constraint ? ` through the key '${report.constraint}'` : '';
  return new ValidationError(`Cannot delete or change this record: ${referencing} records still refer to it${through} (on_delete RESTRICT)`);
}

/** A value the column cannot hold (data exception class 22, the cases input can cause). */
function invalidValue(report: PostgresErrorReport): ValidationError | undefined {
  switch (report.code) {
    case '22001':
      return new ValidationError('A value is too long for its field');
    case '22003':
      return new ValidationError('A number is out of range for its field');
    case '22P02':
    case '22007':
    case '22008':
      return new ValidationError('A value has the wrong format for its field');
    case '22021': // a NUL character in text: PostgreSQL text cannot hold it
    case '22P05':
      return new ValidationError('A value contains a character that cannot be stored (the NUL character \\u0000)');
    default:
      return undefined;
  }
}

function modelOf(report: PostgresErrorReport, names?: ConstraintDescriptions): string {
  if (!report.table) return 'A record';
  return names?.model(report.table) ?? `Table "${report.table}"`;
}

function fieldOf(report: PostgresErrorReport, column: string, names?: ConstraintDescriptions): string {
  return (report.table && names?.field(report.table, column)) || column.replace(/_id$/, '');
}

/** The columns of `Key (a, b)=(…)` in a violation's detail (the values are left out of messages). */
/** The value of a one-column key in a report's detail: `Key (stage_id)=(42) …` → `42`. */
function keyValue(detail: string | undefined): string | undefined {
  return /^Key \([^,)]*\)=\(([^)]*)\)/.exec(detail ?? '')?.[1];
}

function keyColumns(detail: string | undefined): string[] {
  const match = /^Key \(([^)]*)\)=/.exec(detail ?? '');
  return match ? match[1]!.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1')).filter(Boolean) : [];
}

/** A PostgreSQL error report (it has a five-character SQLSTATE and a severity), else undefined. */
function postgresReport(error: unknown): PostgresErrorReport | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || typeof severity !== 'string') return undefined;
  return error as PostgresErrorReport;
}

function errorCode(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : '';
}

/** The errors inside an AggregateError (Node reports a connect to several addresses that way). */
function aggregated(error: unknown): unknown[] {
  return error instanceof AggregateError ? error.errors : [];
}
