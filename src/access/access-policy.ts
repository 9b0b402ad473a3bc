/**
 * The access layer as the ORM sees it: a principal's profile compiled into the `AccessPolicy` the
 * ORM declares (`orm/access-policy.ts`), whose read predicate and write checks the read and write
 * paths call at their one point each. The layers that build a unit of work for a principal (the
 * HTTP request context, tests acting as someone) hand it the compiled policy; the ORM never
 * imports this layer.
 *
 * One policy per profile: a profile is loaded once per credential and security version (and
 * remembered with the credential), so its policy — the key of what the ORM caches per principal,
 * such as compiled reads (`read-by-id.ts`) — is too.
 */
import type {
  AccessPolicy, LinkCheckOptions, Permission, StatementChecks, WrittenValues,
} from '../orm/access-policy.js';
import type { Field } from '../orm/fields/field.js';
import type { ManyToManyField, ManyToOneField } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import type { QueryScope } from '../orm/query/query-scope.js';
import type { SqlFragment } from '../db/sql-fragment.js';
import type { AccessProfile } from './access-profile.js';
import {
  accessCondition, assertCompanyValues, assertRight, joinedReadCondition, registerProfile,
} from './record-access.js';
import { assertRecordsAllowed, createCheck } from './record-checks.js';
import { linkCheck } from './reference-checks.js';

class ProfilePolicy implements AccessPolicy {
  constructor(private readonly profile: AccessProfile) {}

  hasRight(meta: ModelMeta, perm: Permission): boolean {
    return this.profile.rights.get(meta.name)?.has(perm) === true;
  }

  assertRight(meta: ModelMeta, perm: Permission): void {
    assertRight(meta, perm, this.profile);
  }

  readCondition(meta: ModelMeta, scope: QueryScope, joinedAt?: string): SqlFragment | null {
    if (joinedAt !== undefined) return joinedReadCondition(meta, scope, joinedAt, this.profile);
    assertRight(meta, 'read', this.profile);
    return accessCondition(meta, 'read', scope, this.profile);
  }

  assertCompanyValues(meta: ModelMeta, values: WrittenValues, fields?: readonly (ManyToOneField | ManyToManyField)[]): void {
    assertCompanyValues(meta, values, this.profile, fields);
  }

  assertRecordsAllowed(meta: ModelMeta, perm: Permission, ids: readonly number[]): Promise<void> {
    return assertRecordsAllowed(meta, perm, ids, this.profile);
  }

  statementChecks(
    meta: ModelMeta, op: 'create' | 'write', written: readonly ReadonlyMap<Field, unknown>[], options: LinkCheckOptions,
  ): StatementChecks | null {
    // Links first: a link to a model the caller may not read is refused (403) before anything else.
    const links = linkCheck(meta, written, options, this.profile);
    const rules = op === 'create' ? createCheck(meta, this.profile) : null;
    if (!links && !rules && rules !== undefined) return null;
    return { links, rules: rules ?? null, rulesAfter: rules === undefined };
  }
}

const compiled = new WeakMap<AccessProfile, AccessPolicy>();

/** The policy enforcing `profile`: the same object for the same profile. */
export function compileAccessPolicy(profile: AccessProfile): AccessPolicy {
  let policy = compiled.get(profile);
  if (!policy) {
    policy = new ProfilePolicy(profile);
    compiled.set(profile, policy);
    registerProfile(policy, profile);
  }
  return policy;
}
