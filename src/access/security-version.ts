/**
 * The security version: a counter in `ff_state` that every change to who may do what moves —
 * access rows, record rules, group and company memberships, a user's active flag or companies.
 * Workers cache access profiles per version and the request guard compares it in the request's
 * first statement, so a change holds from the very next request on every worker. Moved by
 * statement-level triggers (`db/counter-triggers.ts`).
 */
import type { SqlExecutor } from '../db/sql-executor.js';
import { sql, type SqlFragment } from '../db/sql-fragment.js';
import type { ManyToManyField } from '../orm/fields/relational-fields.js';
import type { Registry } from '../orm/registry.js';
import { planCounterTriggers, type Counter, type TriggerPlan } from '../db/counter-triggers.js';

/** Tables whose every change moves the version, and tables where only some columns do. */
function securityVersion(registry: Registry): Counter {
  const join = (model: string, field: string) => (registry.meta(model).fields.get(field) as ManyToManyField).join.table;
  return {
    column: 'security_version',
    trigger: 'ff_security_version',
    watched: [
      { table: registry.meta('ModelAccess').table },
      { table: registry.meta('RecordRule').table },
      { table: join('RecordRule', 'groups') },
      { table: join('User', 'groups') },
      { table: join('User', 'companies') },
      { table: join('ServiceAccount', 'groups') },
      { table: registry.meta('User').table, columns: ['active', 'company_id'] },
      // A key's scopes narrow its rights (readonly through the API; this covers any other path).
      { table: registry.meta('ApiKey').table, columns: ['scopes'] },
    ],
  };
}

/** The security version's triggers, planned by the installer with the schema (see `planCounterTriggers`). */
export function planSecurityTriggers(db: SqlExecutor, registry: Registry, created: ReadonlySet<string>): Promise<TriggerPlan> {
  return planCounterTriggers(db, securityVersion(registry), created);
}

/**
 * The security version as the current statement sees it (the transaction's own changes included),
 * as a scalar subquery to put in a statement that runs anyway: what was derived at the version a
 * unit of work started at still holds if this is the same.
 */
export const SECURITY_VERSION_NOW: SqlFragment = sql`(SELECT security_version FROM ff_state WHERE id = 1)`;
