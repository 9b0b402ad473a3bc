/**
 * Runs compiled SQL in the current transaction and turns database constraint violations into
 * precise `ValidationError`s (which fields, which model) instead of 500s. Every statement of model
 * code passes here, which is what makes the request guard (`auth/request-guard.ts`) hold: no
 * statement runs before a remembered credential is confirmed, except a SELECT that carries the
 * confirmation itself and returns nothing unless it passes.
 */
import { sql, type RawBuilder } from 'kysely';
import { GUARD_SQLSTATE, StaleCredential } from '../auth/request-guard.js';
import { ValidationError } from '../errors.js';
import { currentEnv, type Env } from './env.js';
import { flushAssignments } from './flush-assignments.js';
import type { Registry } from './registry.js';

export async function runSql<R = Record<string, unknown>>(query: RawBuilder<R>): Promise<R[]> {
  const env = currentEnv();
  if (env.pendingWrites.size) await flushAssignments(env);
  if (env.guard?.pending) await settleGuard(env);
  return execute(env, query);
}

/**
 * A statement that returns rows and can carry the request guard: `build` gets the extra output
 * column to add to its SELECT list or RETURNING clause (null when nothing is pending). The guard is
 * an uncorrelated sub-select, evaluated once before the first row leaves the server; if it
 * refuses, the statement fails as a whole (a write is undone with it). A row carrying its `true`
 * confirms it for the rest of the request; an empty answer confirms nothing, so the guard stays
 * pending for the next statement. A write must return a row for everything it changes
 * (`RETURNING`), so a write that returns nothing changed nothing.
 */
export async function runGuarded<R extends Record<string, unknown>>(
  build: (guardColumn: RawBuilder<unknown> | null) => RawBuilder<unknown>,
): Promise<R[]> {
  const env = currentEnv();
  // Fields assigned in model code are written before any statement reads or writes (flush).
  if (env.pendingWrites.size) await flushAssignments(env);
  const guard = env.guard;
  if (!guard?.pending) return execute(env, build(null) as RawBuilder<R>);
  const rows = await execute(env, build(sql`(SELECT ${guard.call()}) AS "__guard"`) as RawBuilder<R & { __guard?: boolean }>, true);
  if (rows[0]?.__guard === true) guard.pending = false;
  for (const row of rows) delete row.__guard;
  return rows;
}

/** `SELECT <columns> <rest>` (`rest` starts at FROM), carrying the request guard while it is pending. */
export function runSelect<R extends Record<string, unknown> = Record<string, unknown>>(
  columns: RawBuilder<unknown>, rest: RawBuilder<unknown>,
): Promise<R[]> {
  return runGuarded<R>((guard) => (guard ? sql`SELECT ${columns}, ${guard} ${rest}` : sql`SELECT ${columns} ${rest}`));
}

/** Confirms a pending request guard with a statement of its own (throws `StaleCredential`). */
export async function settleGuard(env: Env = currentEnv()): Promise<void> {
  const guard = env.guard;
  if (!guard?.pending) return;
  await execute(env, sql`SELECT ${guard.call()} AS ok`, true);
  guard.pending = false;
}

/** SQLSTATE of a call to a function that does not exist (the guard dropped by hand). */
const UNDEFINED_FUNCTION = '42883';

async function execute<R>(env: Env, query: RawBuilder<R>, guarded = false): Promise<R[]> {
  try {
    const result = await query.execute(env.trx);
    return result.rows;
  } catch (err) {
    const code = (err as PgError | null)?.code;
    if (code === GUARD_SQLSTATE || (guarded && code === UNDEFINED_FUNCTION)) throw new StaleCredential();
    throw translateDbError(err, env.registry);
  }
}

interface PgError {
  code?: string;
  constraint?: string;
  table?: string;
  column?: string;
  detail?: string;
}

function modelOfTable(registry: Registry, table: string | undefined): string {
  for (const meta of registry.models.values()) if (meta.table === table) return meta.verboseName;
  return table ?? 'record';
}

export function translateDbError(err: unknown, registry: Registry): unknown {
  const e = err as PgError;
  if (!e || typeof e.code !== 'string') return err;
  const info = e.constraint ? registry.constraints.get(e.constraint) : undefined;
  switch (e.code) {
    case '23505': {
      if (info?.message) return new ValidationError(info.message);
      if (info) {
        const meta = registry.meta(info.model);
        return new ValidationError(
          `${meta.verboseName}: the combination of ${info.fields.map((f) => `'${f}'`).join(', ')} must be unique; another record already has these values`,
        );
      }
      return new ValidationError('A record with the same unique values already exists');
    }
    case '23503': {
      const field = info?.fields[0];
      if (e.detail?.includes('is still referenced')) {
        const referencing = info ? registry.meta(info.model).verboseName : modelOfTable(registry, e.table);
        return new ValidationError(
          `Cannot delete or change this record: ${referencing} records still refer to it${field ? ` through '${field}'` : ''} (on_delete RESTRICT)`,
        );
      }
      return new ValidationError(`The record referenced${field ? ` by '${field}'` : ''} does not exist`);
    }
    case '23502':
      return new ValidationError(`Field '${e.column?.replace(/_id$/, '')}' of ${modelOfTable(registry, e.table)} is required`);
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
      return err;
  }
}
