/**
 * A create that is its unit of work's only statement commits by itself: the API's create of one
 * record whose model needs nothing after the INSERT (no lines, links, setters, recomputes,
 * dependents, company consistency, after-INSERT rule check). Its INSERT is sent without BEGIN
 * (`PreparingClient.queryAlone`), so the COMMIT's round trip is saved: a fifth of a simple
 * create's CPU, node and PostgreSQL together (issue 15).
 *
 * A statement that commits by itself cannot be undone by node afterwards, so the link and rule
 * checks that the INSERT's RETURNING otherwise reports for node to verify (and roll back on) must
 * fail the statement itself: one RETURNING column raises unless every check passes. Raised, the
 * INSERT wrote nothing; the create then runs again the ordinary way, in a transaction, whose checks
 * give the exact refusal. A refusal costs a statement more; the create that passes saves two.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';

/**
 * The text the refusal carries. Cast to an integer, it fails with 22P02 at run time only (the
 * expression reads the row, so the planner cannot fold it), and names the row that failed.
 */
const REFUSED = 'ff-create-refused:';
const INVALID_TEXT_REPRESENTATION = '22P02';

/** The column `refusingColumn` adds, removed from the rows before records are built from them. */
export const REFUSED_COLUMN = '__checked';

/** The RETURNING item that fails the INSERT unless every condition holds for the written row. */
export function refusingColumn(table: string, conditions: readonly SqlFragment[]): SqlFragment {
  if (!conditions.length) return sql``;
  return sql`, CASE WHEN ${sql.join(conditions, sql` AND `)} THEN TRUE
    ELSE (${sql.raw(`'${REFUSED}'`)} || ${sql.id(table, 'id')})::int > 0 END AS ${sql.id(REFUSED_COLUMN)}`;
}

/** Whether `error` (or what it was translated from) is the refusal `refusingColumn` raises. */
export function isAloneRefusal(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (code === INVALID_TEXT_REPRESENTATION && typeof message === 'string' && message.includes(REFUSED)) return true;
  }
  return false;
}

/** Thrown by a create run alone whose checks refused: run it again in a transaction. */
export class RefusedAlone extends Error {
  constructor() {
    super('A create run alone was refused by its checks; it runs again in a transaction');
  }
}
