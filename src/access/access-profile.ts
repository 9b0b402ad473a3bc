/**
 * What one principal may do in one database, loaded once per security version: its groups, its
 * allowed companies, its model rights (ModelAccess: a right is granted when any row of one of its
 * groups — or a row without a group — grants it; no row means denied) and the record rules that
 * apply to it, parsed. The ORM compiles the rules into the SQL of each statement (select-plan.ts),
 * so enforcing them costs no statement of its own.
 */
import { sql } from '../db/sql-fragment.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { Permission } from '../orm/access-policy.js';
import type { ManyToManyField } from '../orm/fields/relational-fields.js';
import type { FilterNode } from '../orm/query/filter-ast.js';
import { parseFilter } from '../orm/query/filter-parser.js';
import type { Registry } from '../orm/registry.js';

export type { Permission };
export const PERMISSIONS: readonly Permission[] = ['read', 'write', 'create', 'delete'];

/** A record rule as it applies to this principal. */
export interface AppliedRule {
  readonly id: number;
  readonly name: string;
  /** Global rules always apply (ANDed); group rules add up (ORed among themselves). */
  readonly global: boolean;
  readonly perms: ReadonlySet<Permission>;
  /** Null when the filter text does not parse: the rule then matches nothing (fail closed). */
  readonly filter: FilterNode | null;
}

export interface AccessProfile {
  readonly groupIds: readonly number[];
  readonly companyIds: readonly number[];
  /** model → rights granted. */
  readonly rights: ReadonlyMap<string, ReadonlySet<Permission>>;
  /** model → rules applying to this principal. */
  readonly rules: ReadonlyMap<string, readonly AppliedRule[]>;
}

/** Whose groups: a person's own, or — for an API key — its service account's. */
export interface ProfileSubject {
  uid: number;
  serviceAccountId: number | null;
}

function joinTable(registry: Registry, model: string, field: string) {
  return (registry.meta(model).fields.get(field) as ManyToManyField).join;
}

/** Loads the profile in two statements (groups and companies; rights and rules). */
export async function loadAccessProfile(db: SqlExecutor, registry: Registry, subject: ProfileSubject): Promise<AccessProfile> {
  const userGroups = joinTable(registry, 'User', 'groups');
  const accountGroups = joinTable(registry, 'ServiceAccount', 'groups');
  const userCompanies = joinTable(registry, 'User', 'companies');
  const groupsSql = subject.serviceAccountId !== null
    ? sql`SELECT ${sql.id(accountGroups.targetColumn)} FROM ${sql.table(accountGroups.table)} WHERE ${sql.id(accountGroups.sourceColumn)} = ${subject.serviceAccountId}`
    : sql`SELECT ${sql.id(userGroups.targetColumn)} FROM ${sql.table(userGroups.table)} WHERE ${sql.id(userGroups.sourceColumn)} = ${subject.uid}`;
  const { rows: [who] } = await sql<{ groups: number[]; companies: number[] }>`SELECT
      ARRAY(${groupsSql}) AS groups,
      ARRAY(SELECT ${sql.id(userCompanies.targetColumn)} FROM ${sql.table(userCompanies.table)} WHERE ${sql.id(userCompanies.sourceColumn)} = ${subject.uid}
            UNION SELECT company_id FROM ${sql.table(registry.meta('User').table)} WHERE id = ${subject.uid} AND company_id IS NOT NULL) AS companies`.execute(db);
  const groupIds = who?.groups ?? [];
  const companyIds = (who?.companies ?? []).sort((a, b) => a - b);

  const ruleGroups = joinTable(registry, 'RecordRule', 'groups');
  const { rows } = await sql<{
    kind: 'right' | 'rule'; id: number | null; name: string | null; model: string; filter: string | null;
    is_global: boolean | null; read: boolean; write: boolean; create: boolean; delete: boolean;
  }>`SELECT 'right' AS kind, NULL::int AS id, NULL AS name, model, NULL AS filter, NULL::boolean AS is_global,
        bool_or(read_perm) AS read, bool_or(write_perm) AS write, bool_or(create_perm) AS create, bool_or(delete_perm) AS delete
      FROM ${sql.table(registry.meta('ModelAccess').table)}
      WHERE group_id IS NULL OR group_id = ANY(${groupIds}::int[])
      GROUP BY model
    UNION ALL
    SELECT 'rule', r.id, r.name, r.model, r.filter,
        NOT EXISTS (SELECT 1 FROM ${sql.table(ruleGroups.table)} g WHERE g.${sql.id(ruleGroups.sourceColumn)} = r.id),
        r.perm_read, r.perm_write, r.perm_create, r.perm_delete
      FROM ${sql.table(registry.meta('RecordRule').table)} r
      WHERE r.active IS TRUE AND (
        NOT EXISTS (SELECT 1 FROM ${sql.table(ruleGroups.table)} g WHERE g.${sql.id(ruleGroups.sourceColumn)} = r.id)
        OR EXISTS (SELECT 1 FROM ${sql.table(ruleGroups.table)} g WHERE g.${sql.id(ruleGroups.sourceColumn)} = r.id
                   AND g.${sql.id(ruleGroups.targetColumn)} = ANY(${groupIds}::int[])))`.execute(db);

  const rights = new Map<string, Set<Permission>>();
  const rules = new Map<string, AppliedRule[]>();
  for (const row of rows) {
    const perms = new Set(PERMISSIONS.filter((p) => row[p]));
    if (row.kind === 'right') {
      rights.set(row.model, perms);
      continue;
    }
    let filter: FilterNode | null = null;
    try {
      filter = parseFilter(row.filter ?? '');
    } catch {
      filter = null;
    }
    const list = rules.get(row.model) ?? rules.set(row.model, []).get(row.model)!;
    list.push({ id: row.id!, name: row.name ?? '', global: row.is_global === true, perms, filter });
  }
  return { groupIds, companyIds, rights, rules };
}

/**
 * The profile of a scoped API key: a right stays only where a scope grants it too (scopes narrow,
 * never widen; a model no scope names has no rights).
 */
export function narrowToScopes(profile: AccessProfile, scopes: readonly { model: string; perms: readonly string[] }[] | null | undefined): AccessProfile {
  if (!scopes) return profile;
  const allowed = new Map<string, Set<string>>();
  for (const scope of scopes) {
    const set = allowed.get(scope.model) ?? allowed.set(scope.model, new Set()).get(scope.model)!;
    for (const p of scope.perms) set.add(p);
  }
  const rights = new Map<string, ReadonlySet<Permission>>();
  for (const [model, perms] of profile.rights) {
    const kept = new Set([...perms].filter((p) => allowed.get(model)?.has(p)));
    if (kept.size) rights.set(model, kept);
  }
  return { ...profile, rights };
}
