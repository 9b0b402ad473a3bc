/**
 * How a statement carries the request guard (`auth/request-guard.ts`): a read, the function's
 * comparison written out in its select list; a write or a statement of its own, the function.
 */

/** The guard as a read carries it. */
export const READ_GUARD = /\(SELECT COALESCE\(\$\d+::timestamptz > now\(\), TRUE\) FROM ff_state s\s+WHERE s\.id = 1/;
/** The guard function, as a write's RETURNING or a statement of its own carries it. */
export const WRITE_GUARD = /ff_request_guard\(\$\d+::int, \$\d+::int, \$\d+::int, \$\d+::timestamptz\)/;

/** Whether `statement` carries the guard, in either form. */
export function carriesGuard(statement: string): boolean {
  return READ_GUARD.test(statement) || WRITE_GUARD.test(statement);
}
