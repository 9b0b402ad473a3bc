/**
 * What a write may refer to. A link written by a caller (a task's assignee, an order's customer, a
 * line's product, a file field's attachment) must name a record the caller may read: a record it
 * cannot see is refused exactly as a missing one — same status, error and detail — so a write can
 * never probe which hidden ids exist. Links to models the caller reads without restriction need
 * no statement of their own (the foreign key refuses a missing id); links to restricted models
 * (record rules, company isolation, owned records) are looked up with one query per target model
 * for the whole write, under the caller's read access.
 */
import { ValidationError } from '../errors.js';
import type { Field } from '../orm/fields/field.js';
import { FileField, ManyToOneField } from '../orm/fields/relational-fields.js';
import { AUDIT_FIELDS } from '../orm/generic-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { inCondition } from '../orm/query/filter-ast.js';
import { QuerySet } from '../orm/queryset.js';
import { activeAccess, assertRight, isRestricted } from './record-access.js';

/** The refusal of a link to ids that do not exist for the caller (missing or hidden alike). */
export function missingReference(field: Field, targetName: string, ids: readonly number[]): ValidationError {
  return new ValidationError(`Field '${field.name}': ${targetName} ${ids.slice(0, 5).join(', ')} does not exist`);
}

/** The model a link field points to (a File field: the attachment). */
function linkTarget(field: Field): ModelMeta | null {
  if (field instanceof ManyToOneField) return field.target;
  if (field instanceof FileField) return field.model.registry.has('Attachment') ? field.model.registry.meta('Attachment') : null;
  return null;
}

export interface LinkCheckOptions {
  /** A link the write path sets itself (a new line's link to the parent being written). */
  readonly except?: Field | null;
  /** Attachments just made from this write's uploads (they belong to the record being written). */
  readonly uploaded?: ReadonlySet<number>;
}

/**
 * Refuses link values (ManyToOne and File columns) of `written` — one map of field → column value
 * per record, only what the caller gave — that name a record the caller may not read.
 */
export async function assertLinksReadable(
  meta: ModelMeta, written: readonly ReadonlyMap<Field, unknown>[], options: LinkCheckOptions = {},
): Promise<void> {
  const access = activeAccess();
  if (!access) return;
  const byField = new Map<Field, Set<number>>();
  for (const columns of written) {
    for (const [field, value] of columns) {
      if (typeof value !== 'number' || field === options.except || (AUDIT_FIELDS as readonly string[]).includes(field.name)) continue;
      if (field instanceof FileField && options.uploaded?.has(value)) continue;
      const target = linkTarget(field);
      if (!target) continue;
      const ids = byField.get(field) ?? byField.set(field, new Set()).get(field)!;
      ids.add(value);
    }
  }
  // One query per target model, whatever the number of fields and records pointing at it.
  const byTarget = new Map<ModelMeta, { ids: Set<number>; fields: [Field, Set<number>][] }>();
  for (const [field, ids] of byField) {
    const target = linkTarget(field)!;
    assertRight(target, 'read', access);
    // Readable without restriction: every existing record is visible, the foreign key refuses the rest.
    if (!isRestricted(target, 'read', access)) continue;
    const entry = byTarget.get(target) ?? byTarget.set(target, { ids: new Set(), fields: [] }).get(target)!;
    for (const id of ids) entry.ids.add(id);
    entry.fields.push([field, ids]);
  }
  for (const [target, { ids, fields }] of byTarget) {
    const visible = new Set(await new QuerySet(target).with_archived().filter(inCondition(['id'], [...ids])).ids());
    for (const [field, wanted] of fields) {
      const absent = [...wanted].filter((id) => !visible.has(id));
      if (absent.length) throw missingReference(field, target.name, absent);
    }
  }
}
