/**
 * Runs compiled SQL in the current transaction and turns database constraint violations into
 * precise `ValidationError`s (which fields, which model) instead of 500s. Every statement of model
 * code passes here, which is what makes the request guard (`auth/request-guard.ts`) hold: no
 * statement runs before a remembered credential is confirmed, except a SELECT that carries the
 * confirmation itself and returns nothing unless it passes.
 */
import type { StatementOptions } from '../db/direct-statements.js';
import { sql, type SqlFragment } from '../db/sql-fragment.js';
import { sqlState, translateDataError, type ConstraintDescriptions } from '../db/database-errors.js';
import { currentEnv, type Env } from './env.js';
import { ManyToOneField } from './fields/relational-fields.js';
import type { Registry } from './registry.js';
import { GUARD_SQLSTATE, StaleCredential } from './stale-credential.js';

/** Runs a statement of model code (built with the `sql` tag of `db/sql-fragment.ts`). */
export async function runSql<R = Record<string, unknown>>(query: SqlFragment<R>): Promise<R[]> {
  const env = currentEnv();
  if (env.work.pendingWrites.size) await env.work.flush();
  if (env.ports.guard?.pending) await settleGuard(env);
  return execute(env, query);
}

/**
 * A statement that returns rows and can carry the request guard: `build` gets the extra output
 * column to add to its SELECT list or RETURNING clause (null when nothing is pending). The guard is
 * an uncorrelated sub-select, evaluated once before the first row leaves the server; if it
 * refuses, the statement fails as a whole (a write is undone with it). A read (`reads`) carries
 * the check as a plain expression instead, and its rows are refused here unless it says true. A row carrying its `true`
 * confirms it for the rest of the request; an empty answer confirms nothing, so the guard stays
 * pending for the next statement. A write must return a row for everything it changes
 * (`RETURNING`), so a write that returns nothing changed nothing.
 */
export async function runGuarded<R extends Record<string, unknown>>(
  build: (guardColumn: SqlFragment | null) => SqlFragment,
  options?: StatementOptions,
  /** A read: the guard's comparison rides as a plain column, and rows it does not confirm are refused here. */
  reads = false,
): Promise<R[]> {
  const env = currentEnv();
  // Fields assigned in model code are written before any statement reads or writes (flush).
  if (env.work.pendingWrites.size) await env.work.flush();
  const guard = env.ports.guard;
  if (!guard?.pending) return execute(env, build(null) as SqlFragment<R>, false, options);
  const column = reads ? guard.inline() : sql`(SELECT ${guard.call()})`;
  const rows = await execute(env, build(sql`${column} AS "__guard"`) as SqlFragment<R & { __guard?: boolean | null }>, true, options);
  if (rows.length) {
    // A read's rows under a credential that no longer holds are never used: resolved again.
    if (rows[0]!.__guard !== true) throw new StaleCredential();
    guard.pending = false;
  }
  for (const row of rows) delete row.__guard;
  return rows;
}

/** `SELECT <columns> <rest>` (`rest` starts at FROM), carrying the request guard while it is pending. */
export function runSelect<R extends Record<string, unknown> = Record<string, unknown>>(
  columns: SqlFragment, rest: SqlFragment,
): Promise<R[]> {
  return runGuarded<R>((guard) => selectStatementText(columns, guard, rest), undefined, true);
}

/** The statement `runSelect` sends: the guard's column, when there is one, after the others. */
export function selectStatementText(columns: SqlFragment, guard: SqlFragment | null, rest: SqlFragment): SqlFragment {
  return guard ? sql`SELECT ${columns}, ${guard} ${rest}` : sql`SELECT ${columns} ${rest}`;
}

/** Confirms a pending request guard with a statement of its own (throws `StaleCredential`). */
export async function settleGuard(env: Env = currentEnv()): Promise<void> {
  const guard = env.ports.guard;
  if (!guard?.pending) return;
  await execute(env, sql`SELECT ${guard.call()} AS ok`, true);
  guard.pending = false;
}

/** SQLSTATE of a call to a function that does not exist (the guard dropped by hand). */
const UNDEFINED_FUNCTION = '42883';

async function execute<R>(env: Env, query: SqlFragment<R>, guarded = false, options?: StatementOptions): Promise<R[]> {
  try {
    const result = await query.execute(env.work.trx, options);
    return result.rows;
  } catch (err) {
    const code = sqlState(err);
    if (code === GUARD_SQLSTATE || (guarded && code === UNDEFINED_FUNCTION)) throw new StaleCredential();
    throw translateDbError(err, env.registry);
  }
}

/** Our constraints, tables and columns under the names the registry gives them (for error messages). */
function constraintDescriptions(registry: Registry): ConstraintDescriptions {
  const modelOfTable = (table: string) => [...registry.models.values()].find((meta) => meta.table === table);
  return {
    constraint(name) {
      const info = registry.constraints.get(name);
      if (!info) return undefined;
      const meta = registry.meta(info.model);
      const link = info.kind === 'foreign-key' ? meta.fields.get(info.fields[0]!) : undefined;
      return {
        model: meta.verboseName, fields: info.fields, message: info.message,
        target: link instanceof ManyToOneField ? link.targetName : undefined,
      };
    },
    model: (table) => modelOfTable(table)?.verboseName,
    modelName: (table) => modelOfTable(table)?.name,
    field: (table, column) => [...(modelOfTable(table)?.fields.values() ?? [])].find((f) => f.column === column)?.name,
  };
}

/**
 * A violation the statement's data caused as a `ValidationError` in the registry's terms; the
 * server's conditions stay raw for the HTTP layer (`db/database-errors.ts`).
 */
export function translateDbError(err: unknown, registry: Registry): unknown {
  return translateDataError(err, constraintDescriptions(registry));
}
