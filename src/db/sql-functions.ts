/**
 * The platform's own SQL functions (the request guard, the counters' trigger functions),
 * created only when missing or different. `CREATE OR REPLACE FUNCTION` on every install would
 * rewrite the function's catalog row while every request calls it, and an install must change
 * nothing it does not need to: the catalog (`pg_proc`) is compared first, one query for all of them.
 */
import { sql } from './sql-fragment.js';
import type { SqlExecutor } from './sql-executor.js';

export interface SqlFunction {
  name: string;
  /** Arguments as PostgreSQL prints them (`pg_get_function_arguments`): `p_session integer, p_user integer`. */
  args: string;
  /** As `pg_get_function_result` prints it: `boolean`, `trigger`. */
  returns: string;
  volatility: 'IMMUTABLE' | 'STABLE' | 'VOLATILE';
  parallel: 'SAFE' | 'RESTRICTED' | 'UNSAFE';
  /** PL/pgSQL source, stored verbatim in `pg_proc.prosrc`; must not contain `$ff$`. */
  body: string;
}

const VOLATILITY_CODE = { IMMUTABLE: 'i', STABLE: 's', VOLATILE: 'v' } as const;
const PARALLEL_CODE = { SAFE: 's', RESTRICTED: 'r', UNSAFE: 'u' } as const;

/** Creates or replaces each function whose catalog entry is missing or differs; returns the names it (re)created. */
export async function ensureFunctions(db: SqlExecutor, functions: readonly SqlFunction[]): Promise<string[]> {
  const { rows } = await sql<{ name: string; args: string; returns: string; volatility: string; parallel: string; language: string; body: string }>`
    SELECT p.proname AS name, pg_get_function_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS returns,
      p.provolatile AS volatility, p.proparallel AS parallel, l.lanname AS language, p.prosrc AS body
    FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
    WHERE p.pronamespace = 'public'::regnamespace AND p.proname IN (${sql.join(functions.map((f) => f.name))})`.execute(db);
  const changed: string[] = [];
  for (const f of functions) {
    const same = rows.some((r) => r.name === f.name && r.args === f.args && r.returns === f.returns && r.language === 'plpgsql'
      && r.volatility === VOLATILITY_CODE[f.volatility] && r.parallel === PARALLEL_CODE[f.parallel] && r.body === f.body);
    if (same) continue;
    if (f.body.includes('$ff$')) throw new Error(`The body of ${f.name} must not contain $ff$`);
    // Our own constant text (never input), so it can be sent as is.
    await sql.raw(`CREATE OR REPLACE FUNCTION ${f.name}(${f.args}) RETURNS ${f.returns} LANGUAGE plpgsql ${f.volatility}
      PARALLEL ${f.parallel} AS $ff$${f.body}$ff$`).execute(db);
    changed.push(f.name);
  }
  return changed;
}

/** Drops a function of an older signature (`name(text, integer)`) if the database still has it. */
export async function dropFunctionIfPresent(db: SqlExecutor, signature: string): Promise<void> {
  const { rows } = await sql<{ present: boolean }>`SELECT to_regprocedure(${signature}) IS NOT NULL AS present`.execute(db);
  if (rows[0]?.present) await sql.raw(`DROP FUNCTION ${signature}`).execute(db);
}
