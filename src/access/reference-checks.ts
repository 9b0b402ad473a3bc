/**
 * What a write may refer to. A link written by a caller (a task's assignee, an order's customer, a
 * line's product, a file field's attachment) must name a record the caller may read: a record it
 * cannot see is refused exactly as a missing one — same status, error and detail — so a write can
 * never probe which hidden ids exist. Links to models the caller reads without restriction need
 * no check of their own (the foreign key refuses a missing id); links to restricted models (record
 * rules, company isolation, owned records) are checked by the write's own INSERT or UPDATE: its
 * RETURNING clause says, per written row and link, whether the linked record is readable under the
 * caller's access, so the check costs no statement (the write is undone when it refuses).
 */
import { sql } from '../db/sql-fragment.js';
import type { LinkCheck, LinkCheckOptions } from '../orm/access-policy.js';
import type { Field } from '../orm/fields/field.js';
import { FileField, ManyToOneField } from '../orm/fields/relational-fields.js';
import { AUDIT_FIELDS } from '../orm/generic-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { QueryScope } from '../orm/query/query-scope.js';
import { currentVariables } from '../orm/query/select-plan.js';
import { missingReference } from '../orm/missing-reference.js';
import type { AccessProfile } from './access-profile.js';
import { accessCondition, assertRight, isRestricted } from './record-access.js';

/** The model a link field points to (a File field: the attachment). */
function linkTarget(field: Field): ModelMeta | null {
  if (field instanceof ManyToOneField) return field.target;
  if (field instanceof FileField) return field.model.registry.has('Attachment') ? field.model.registry.meta('Attachment') : null;
  return null;
}

/**
 * The link check of a write of `meta` whose rows are `table` in the statement, or null when no
 * given link needs one. `written`: per record, the column values the caller gave (not defaults).
 */
export function linkCheck(
  meta: ModelMeta, written: readonly ReadonlyMap<Field, unknown>[], options: LinkCheckOptions, access: AccessProfile,
): LinkCheck | null {
  const fields: Field[] = [];
  for (const columns of written) {
    for (const [field, value] of columns) {
      if (typeof value !== 'number' || fields.includes(field) || !isCheckedLink(field, value, options)) continue;
      const target = linkTarget(field)!;
      assertRight(target, 'read', access);
      // Readable without restriction: every existing record is visible, the foreign key refuses the rest.
      if (isRestricted(target, 'read', access)) fields.push(field);
    }
  }
  if (!fields.length) return null;
  const conditions = fields.map((field) => {
    const target = linkTarget(field)!;
    const scope = new QueryScope(target, currentVariables(), false);
    const readable = accessCondition(target, 'read', scope, access)!;
    const column = sql.id(meta.table, field.column!);
    return sql`EXISTS (SELECT 1 FROM ${scope.from()} WHERE ${sql.id(scope.alias, 'id')} = ${column} AND ${readable})`;
  });
  return {
    returning: sql.join(conditions.map((condition, i) => sql`, ${condition} AS ${sql.id(`__link_${fields[i]!.name}`)}`), sql``),
    conditions,
    verify(rows, given) {
      for (const field of fields) {
        const key = `__link_${field.name}`;
        rows.forEach((row, i) => {
          const value = (given[i] ?? given[0])?.get(field);
          const readable = row[key] === true;
          delete row[key];
          if (!readable && typeof value === 'number' && isCheckedLink(field, value, options)) {
            throw missingReference(field, linkTarget(field)!.name, [value]);
          }
        });
      }
    },
  };
}

/** A link value given by the caller, other than the audit columns and the write path's own links. */
function isCheckedLink(field: Field, value: number, options: LinkCheckOptions): boolean {
  if (field === options.except || (AUDIT_FIELDS as readonly string[]).includes(field.name) || !linkTarget(field)) return false;
  return !(field instanceof FileField && options.uploaded?.has(value));
}
