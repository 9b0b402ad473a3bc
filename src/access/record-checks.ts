/**
 * Write-side record checks: before an update or delete, the records must be visible and pass the
 * rules for that right (and company isolation); after a create, the new records must pass the
 * create rules. One statement, and only when some rule or company restriction applies.
 */
import { sql } from '../db/sql-fragment.js';
import { AccessError, NotFound } from '../errors.js';
import { runSelect } from '../orm/execute-sql.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { QueryScope } from '../orm/query/query-scope.js';
import { currentVariables } from '../orm/query/select-plan.js';
import type { Permission } from './access-profile.js';
import { accessCondition, activeAccess, assertRight } from './record-access.js';

const VERBS: Record<Permission, string> = { read: 'read', write: 'change', create: 'create', delete: 'delete' };

/**
 * Throws unless the right is granted and every existing record of `ids` passes its rules: a
 * record the principal cannot read is a `NotFound` (as if it did not exist — its existence is
 * not revealed), one it can read but not `perm` an `AccessError`. For `create` only the create
 * rules count (the records are new).
 */
export async function assertRecordsAllowed(meta: ModelMeta, perm: Permission, ids: readonly number[]): Promise<void> {
  const access = activeAccess();
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
  if (refused.length) {
    throw new AccessError(
      `You may not ${VERBS[perm]} ${meta.verboseName} ${refused.slice(0, 5).join(', ')}: a record rule or company restriction forbids it`,
    );
  }
}
