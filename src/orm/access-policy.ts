/**
 * The ORM's access port: what its read and write paths ask about the acting principal, declared
 * here and implemented above it (`access/access-policy.ts` compiles a principal's profile into an
 * `AccessPolicy`), so the ORM never imports the access layer. The unit of work carries the policy
 * (`Env.access`); none — and elevated code (`su`) — is unrestricted.
 *
 * Each question has its one point in its path:
 * - read: `readCondition` where a query selects its rows (`planSelect`) and where a relation reaches
 *   a record (`QueryScope.readableCondition`), compiled into the same statement; `hasRight` where a
 *   link's name is shown (`read-records.ts`).
 * - write: plan (`assertRight`, `assertCompanyValues` per record, before any statement), authorise
 *   (`assertRecordsAllowed` on the records a write or delete changes, `statementChecks` for what
 *   rides in the INSERT's or UPDATE's RETURNING), execute, verify (`StatementChecks`).
 * Company consistency is not policy — it binds the platform too — and stays in the write path
 * (`write/company-consistency.ts`).
 */
import type { SqlFragment } from '../db/sql-fragment.js';
import { currentEnv } from './env.js';
import type { Field } from './fields/field.js';
import type { ManyToManyField, ManyToOneField } from './fields/relational-fields.js';
import type { ModelMeta } from './model-meta.js';
import type { QueryScope } from './query/query-scope.js';
import { markFailedRecord } from './write/item-errors.js';

export type Permission = 'read' | 'write' | 'create' | 'delete';

/** The values one record of a write gives (its sorted values, `write-values.ts`). */
export interface WrittenValues {
  readonly columns: ReadonlyMap<Field, unknown>;
  readonly manyToMany: readonly (readonly [ManyToManyField, readonly number[]])[];
}

export interface LinkCheckOptions {
  /** A link the write path sets itself (a new line's link to the parent being written). */
  readonly except?: Field | null;
  /** Attachments just made from this write's uploads (they belong to the record being written). */
  readonly uploaded?: ReadonlySet<number>;
}

/** The links of a write checked by the write's own statement (its RETURNING says, per row and link, whether the target is readable). */
export interface LinkCheck {
  /** `, EXISTS (…) AS "__link_<field>"` items to append to the RETURNING list. */
  readonly returning: SqlFragment;
  /** The same conditions, one per checked link, bare (true when the written row's link is readable). */
  readonly conditions: readonly SqlFragment[];
  /**
   * Throws the refusal of the first given link a returned row shows unreadable, and removes the
   * check columns from the rows. `given[i]` are the values the caller gave for row `i` (one map
   * for all rows: an update writes the same values to every record).
   */
  verify(rows: readonly Record<string, unknown>[], given: readonly ReadonlyMap<Field, unknown>[]): void;
}

/** The create rules of an INSERT, evaluated on its own rows as they come back. */
export interface CreateCheck {
  /** `, <condition> AS "__allowed"`, for the INSERT's RETURNING. */
  readonly returning: SqlFragment;
  /** The same condition, bare (true when the new row passes). */
  readonly condition: SqlFragment;
  /** Throws the refusal `assertRecordsAllowed` would, for the rows the INSERT returned; removes the column. */
  verify(rows: readonly Record<string, unknown>[]): void;
}

/** What a planned INSERT or UPDATE carries for the policy (`AccessPolicy.statementChecks`). */
export interface StatementChecks {
  /** The given links to restricted models, checked in the RETURNING; null when none needs it. */
  readonly links: LinkCheck | null;
  /** A create's rules when they read only the new row (checked in the RETURNING); null otherwise. */
  readonly rules: CreateCheck | null;
  /**
   * A create's rules reach other rows: they cannot ride in the RETURNING, and
   * `assertRecordsAllowed(meta, 'create', ids)` checks them after the INSERT in a statement of their own.
   */
  readonly rulesAfter: boolean;
}

/** What the acting principal may do, as the ORM asks it (see the file comment). */
export interface AccessPolicy {
  /** Whether the model right is granted. */
  hasRight(meta: ModelMeta, perm: Permission): boolean;
  /** Throws `AccessError` (403) unless the model right is granted. */
  assertRight(meta: ModelMeta, perm: Permission): void;
  /**
   * The read predicate: after asserting the read right (403), the condition a row of `meta` must
   * meet to be read, or null when every record is. Without `joinedAt` the rows are `scope`'s root
   * (the condition is compiled in `scope`, for the query's WHERE); with it, a record a relation
   * reaches, joined in `scope` under that alias.
   */
  readCondition(meta: ModelMeta, scope: QueryScope, joinedAt?: string): SqlFragment | null;
  /**
   * Throws `AccessError` when a record's values give a company the principal may not assign.
   * `fields`: the model's company-valued fields, when the caller has them at hand (`companyValuedFields`).
   */
  assertCompanyValues(meta: ModelMeta, values: WrittenValues, fields?: readonly (ManyToOneField | ManyToManyField)[]): void;
  /**
   * Throws unless the right is granted and every existing record of `ids` passes its rules (a
   * record the principal cannot read: `NotFound`; one it reads but may not change: `AccessError`,
   * marked with `refusingRecord`). One statement when something restricts `perm`, none otherwise.
   */
  assertRecordsAllowed(meta: ModelMeta, perm: Permission, ids: readonly number[]): Promise<void>;
  /**
   * The checks a planned INSERT (`create`) or UPDATE (`write`) of `meta` carries, or null when none:
   * `written` holds, per record, the column values the caller gave (not defaults). Create: the
   * caller has asserted the create right already.
   */
  statementChecks(
    meta: ModelMeta, op: 'create' | 'write', written: readonly ReadonlyMap<Field, unknown>[], options: LinkCheckOptions,
  ): StatementChecks | null;
}

/** The policy to enforce, or null when the current code runs elevated (or as the platform). */
export function activePolicy(): AccessPolicy | null {
  const env = currentEnv();
  return env.su ? null : env.access;
}

/** Marks a policy's refusal of records with the first one refused: a bulk write names its item (`attributeFailure`). */
export function refusingRecord<E>(error: E, meta: ModelMeta, id: number): E {
  return markFailedRecord(error, meta, id);
}
