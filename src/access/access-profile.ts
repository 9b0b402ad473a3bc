/**
 * What one principal may do in one database, loaded once per security version: its groups, its
 * allowed companies, its model rights (ModelAccess: a right is granted when any row of one of its
 * groups — or a row without a group — grants it; no row means denied) and the record rules that
 * apply to it, parsed. The ORM compiles the rules into the SQL of each statement (select-plan.ts),
 * so enforcing them costs no statement of its own.
 */
import type { SqlExecutor } from '../db/sql-executor.js';
import type { Permission } from '../orm/access-policy.js';
import type { FilterNode } from '../orm/query/filter-ast.js';
import { parseFilter } from '../orm/query/filter-parser.js';
import type { Registry } from '../orm/registry.js';
import { grantRows, memberships, type ProfileSubject } from '../orm/system/access-rows.js';

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

export type { ProfileSubject };

/** Loads the profile in two statements (groups and companies; rights and rules: `orm/system/access-rows.ts`). */
export async function loadAccessProfile(db: SqlExecutor, registry: Registry, subject: ProfileSubject): Promise<AccessProfile> {
  return profileOfMemberships(db, registry, await memberships(db, registry, subject));
}

/** The profile of principals with these groups and companies (one statement): who shares them shares it. */
export async function profileOfMemberships(db: SqlExecutor, registry: Registry, who: { groups: number[]; companies: number[] }): Promise<AccessProfile> {
  const groupIds = who.groups;
  const companyIds = who.companies.sort((a, b) => a - b);
  const rows = await grantRows(db, registry, groupIds);

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
