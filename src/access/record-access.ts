/**
 * The one enforcement point of model rights, record rules and company isolation. The ORM asks it
 * — through the policy compiled from the principal's profile (`access-policy.ts`) — for a model
 * right before touching a model and for the SQL condition a statement must add, so every path
 * that reads or writes records — API routes, model methods, nested reads, whatever a later
 * endpoint builds on querysets — passes it. Elevated code (`su`: installs, the CLI, recomputation
 * of stored fields, the server acting for an anonymous visitor) is not restricted.
 */
import { sql, type SqlFragment } from '../db/sql-fragment.js';
import { AccessError } from '../errors.js';
import { activePolicy, type AccessPolicy, type WrittenValues } from '../orm/access-policy.js';
import { companyField, companyValuedFields } from '../orm/company-fields.js';
import { ManyToOneField, type ManyToManyField } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { compileFilter } from '../orm/query/compile-filter.js';
import type { QueryScope } from '../orm/query/query-scope.js';
import type { AccessProfile, Permission } from './access-profile.js';

type Sql = SqlFragment;

/** The profile each compiled policy enforces (`access-policy.ts` registers them). */
const profiles = new WeakMap<AccessPolicy, AccessProfile>();

export function registerProfile(policy: AccessPolicy, profile: AccessProfile): void {
  profiles.set(policy, profile);
}

/** The profile to enforce, or null when the current code runs elevated (or as the platform). */
export function activeAccess(): AccessProfile | null {
  const policy = activePolicy();
  if (!policy) return null;
  const profile = profiles.get(policy);
  // A policy this layer did not compile: refuse rather than run unrestricted.
  if (!profile) throw new Error('The environment carries an access policy not compiled by compileAccessPolicy()');
  return profile;
}

const VERBS: Record<Permission, string> = { read: 'read', write: 'change', create: 'create', delete: 'delete' };

/** Throws `AccessError` (403) unless the model right is granted. */
export function assertRight(meta: ModelMeta, perm: Permission, access: AccessProfile | null = activeAccess()): void {
  if (!access) return;
  if (access.rights.get(meta.name)?.has(perm)) return;
  throw new AccessError(`You are not allowed to ${VERBS[perm]} ${meta.verboseName} records`);
}

/** Whether some record rule of the principal applies to `perm` on `meta`. */
function hasRules(meta: ModelMeta, perm: Permission, access: AccessProfile): boolean {
  return (access.rules.get(meta.name) ?? []).some((r) => r.perms.has(perm));
}

/** Company isolation of rows of `meta` aliased `alias`: no company, or one of the allowed ones. */
function companyCondition(meta: ModelMeta, alias: string, access: AccessProfile): Sql | null {
  const company = companyField(meta);
  if (!company) return null;
  const col = sql.id(alias, company.column!);
  return sql`(${col} IS NULL OR ${col} = ANY(${[...access.companyIds]}::int[]))`;
}

/** Whether some rule or company isolation restricts `perm` on `meta` (no SQL built). */
export function isRestricted(meta: ModelMeta, perm: Permission, access: AccessProfile | null = activeAccess()): boolean {
  if (!access) return false;
  return companyField(meta) !== null || hasRules(meta, perm, access) || (perm === 'read' && meta.ownedBy !== null);
}

/**
 * The condition rows of `meta` (aliased by `scope`) must meet for `perm`, or null when nothing
 * restricts them: global rules ANDed, the principal's group rules ORed, and company isolation
 * (no company, or one of the allowed ones). A rule whose filter does not parse matches nothing.
 */
export function accessCondition(meta: ModelMeta, perm: Permission, scope: QueryScope, access: AccessProfile | null = activeAccess()): Sql | null {
  if (!access || !isRestricted(meta, perm, access)) return null;
  const parts: Sql[] = [];
  const groupRules: Sql[] = [];
  // Rule filters are the platform's: what they traverse is not itself restricted (and joins
  // made for them are kept apart from the caller's, see QueryScope.joinManyToOne).
  const restriction = scope.access;
  scope.access = null;
  try {
    for (const rule of access.rules.get(meta.name) ?? []) {
      if (!rule.perms.has(perm)) continue;
      const cond = rule.filter ? sql`COALESCE(${compileFilter(rule.filter, scope)}, FALSE)` : sql`FALSE`;
      (rule.global ? parts : groupRules).push(cond);
    }
  } finally {
    scope.access = restriction;
  }
  if (groupRules.length) parts.push(sql`(${sql.join(groupRules, sql` OR `)})`);
  const company = companyCondition(meta, scope.alias, access);
  if (company) parts.push(company);
  if (perm === 'read' && meta.ownedBy) parts.push(ownerCondition(meta, scope, access));
  return parts.length ? sql.join(parts, sql` AND `) : null;
}

/**
 * The condition a record of `meta` reached through a relation — joined in `scope` under `alias`
 * — must meet to be readable, or null when every record is; 403 when the model itself is not
 * readable. Company isolation alone is a plain condition on the row; record rules go through a
 * subquery (their filters may join).
 */
export function joinedReadCondition(meta: ModelMeta, scope: QueryScope, alias: string, access: AccessProfile): Sql | null {
  assertRight(meta, 'read', access);
  if (!isRestricted(meta, 'read', access)) return null;
  if (!hasRules(meta, 'read', access) && !meta.ownedBy) return companyCondition(meta, alias, access);
  const inner = scope.child(meta);
  const allowed = accessCondition(meta, 'read', inner, access)!;
  return sql`${sql.id(alias, 'id')} IN (SELECT ${sql.id(inner.alias, 'id')} FROM ${inner.from()} WHERE ${allowed})`;
}

/**
 * For a model `_owned_by` another record (attachments): the row has no owner, or the principal
 * may read its owner. Owners of models it may read without restriction are a list of model names;
 * owners of restricted models (rules, company) each an EXISTS under that model's own condition;
 * models it may not read, and owned models themselves, are left out (their rows are hidden).
 */
function ownerCondition(meta: ModelMeta, scope: QueryScope, access: AccessProfile): Sql {
  const { model, record } = meta.ownedBy!;
  const ownerModel = sql.id(scope.alias, meta.fields.get(model)!.column!);
  const ownerId = sql.id(scope.alias, meta.fields.get(record)!.column!);
  const open: string[] = [];
  const either: Sql[] = [sql`${ownerModel} IS NULL`, sql`${ownerId} IS NULL`];
  for (const owner of meta.registry.models.values()) {
    if (owner.ownedBy || !access.rights.get(owner.name)?.has('read')) continue;
    if (!isRestricted(owner, 'read', access)) {
      open.push(owner.name);
      continue;
    }
    const inner = scope.child(owner);
    inner.access = null;
    const allowed = accessCondition(owner, 'read', inner, access)!;
    either.push(sql`(${ownerModel} = ${owner.name} AND EXISTS (SELECT 1 FROM ${inner.from()}
      WHERE ${sql.id(inner.alias, 'id')} = ${ownerId} AND ${allowed}))`);
  }
  if (open.length) either.push(sql`${ownerModel} = ANY(${open}::text[])`);
  return sql`(${sql.join(either, sql` OR `)})`;
}

/**
 * Throws `AccessError` when a written company value — a single company (`company`, `parent` of a
 * company) or a list (`User.companies`) — is not one of the caller's allowed companies: nobody
 * gives a record, a user or themselves a company they do not belong to.
 */
export function assertCompanyValues(
  meta: ModelMeta,
  values: WrittenValues,
  access: AccessProfile | null = activeAccess(),
  fields?: readonly (ManyToOneField | ManyToManyField)[],
): void {
  if (!access) return;
  for (const field of fields ?? companyValuedFields(meta)) {
    const given = field instanceof ManyToOneField
      ? [values.columns.get(field)]
      : values.manyToMany.filter(([f]) => f === field).flatMap(([, ids]) => ids);
    for (const value of given) {
      if (value === undefined || value === null) continue;
      if (typeof value === 'number' && access.companyIds.includes(value)) continue;
      throw new AccessError(field.name === 'company'
        ? `You may not assign ${meta.verboseName} records to company ${String(value)}: it is not one of your companies`
        : `You may not set '${field.name}' of ${meta.verboseName} records to company ${String(value)}: it is not one of your companies`);
    }
  }
}
