/**
 * Write-side record checks: before an update or delete, the records must be visible and pass the
 * rules for that right (and company isolation); after a create, the new records must pass the
 * create rules. One statement, and only when some rule or company restriction applies — or none,
 * for create rules that read only the new row's own columns: they ride in the INSERT's RETURNING
 * (`createCheck`).
 */
import { sql } from '../db/sql-fragment.js';
import { AccessError, NotFound } from '../errors.js';
import { refusingRecord, type CreateCheck } from '../orm/access-policy.js';
import { runSelect } from '../orm/execute-sql.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { QueryScope } from '../orm/query/query-scope.js';
import { currentVariables } from '../orm/query/select-plan.js';
import type { AccessProfile, Permission } from './access-profile.js';
import { accessCondition, activeAccess, assertRight, isRestricted } from './record-access.js';

const VERBS: Record<Permission, string> = { read: 'read', write: 'change', create: 'create', delete: 'delete' };

/** The RETURNING column of an INSERT that carries its create check (`createCheck`). */
const ALLOWED_COLUMN = '__allowed';

/**
 * The create rules (and company isolation) of `meta` as a column of the INSERT's RETURNING, when
 * they read nothing but the new row's own columns (no join, no subquery: the RETURNING's view of
 * the row is then exactly what a SELECT right after the INSERT would see). Null when nothing is to
 * check (no principal, or creating is not restricted); undefined when the rules reach other rows,
 * and `assertRecordsAllowed` checks them after the INSERT in a statement of their own. One statement
 * less per restricted create (issue 15). The caller has asserted the create right already.
 */
export function createCheck(meta: ModelMeta, access: AccessProfile | null): CreateCheck | null | undefined {
  if (!access) return null;
  if (!isRestricted(meta, 'create', access)) return null; // most creates: no scope, no variables
  const scope = QueryScope.ofWrittenRow(meta, currentVariables());
  const allowed = accessCondition(meta, 'create', scope, access);
  if (!allowed) return null;
  if (scope.aliasesUsed > 0) return undefined;
  const condition = sql`COALESCE(${allowed}, FALSE)`;
  return {
    returning: sql`, ${condition} AS ${sql.id(ALLOWED_COLUMN)}`,
    condition,
    verify(rows) {
      const refused: number[] = [];
      for (const row of rows) {
        if (row[ALLOWED_COLUMN] !== true) refused.push(row.id as number);
        delete row[ALLOWED_COLUMN];
      }
      if (refused.length) throw refusal(meta, 'create', refused);
    },
  };
}

/**
 * Throws unless the right is granted and every existing record of `ids` passes its rules: a
 * record the principal cannot read is a `NotFound` (as if it did not exist — its existence is
 * not revealed), one it can read but not `perm` an `AccessError`. For `create` only the create
 * rules count (the records are new).
 */
export async function assertRecordsAllowed(meta: ModelMeta, perm: Permission, ids: readonly number[], access: AccessProfile | null = activeAccess()): Promise<void> {
  if (!access) return;
  assertRight(meta, perm, access);
  if (!ids.length) return;
  const scope = new QueryScope(meta, currentVariables(), false);
  const allowed = accessCondition(meta, perm, scope, access);
  const visible = perm === 'create' ? null : accessCondition(meta, 'read', scope, access);
  if (!allowed && !visible) return;
  const rows = await runSelect<{ id: number; visible: boolean; allowed: boolean }>(
    sql`${sql.id(scope.alias, 'id')} AS id, COALESCE(${visible ?? sql`TRUE`}, FALSE) AS visible, COALESCE(${allowed ?? sql`TRUE`}, FALSE) AS allowed`,
    sql`FROM ${scope.from()} WHERE ${sql.id(scope.alias, 'id')} = ANY(${[...ids]}::int[])`,
  );
  const hidden = rows.filter((r) => !r.visible).map((r) => r.id);
  if (hidden.length) throw new NotFound(`${meta.name} ${hidden.slice(0, 5).join(', ')} does not exist`);
  const refused = rows.filter((r) => !r.allowed).map((r) => r.id);
  if (refused.length) throw refusal(meta, perm, refused);
}

/** The refusal, marked with its first record: a bulk write names that record's item (`refusingRecord`). */
function refusal(meta: ModelMeta, perm: Permission, ids: readonly number[]): AccessError {
  const error = new AccessError(
    `You may not ${VERBS[perm]} ${meta.verboseName} ${ids.slice(0, 5).join(', ')}: a record rule or company restriction forbids it`,
  );
  return refusingRecord(error, meta, ids[0]!);
}
