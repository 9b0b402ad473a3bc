/**
 * Records a caller names outside a write — a wizard's relational inputs, the links of a form's
 * draft — must be records it can read, as a write's links must (`access/reference-checks.ts`):
 * one it cannot see is refused exactly like one that does not exist ("Field 'assignee': Contact
 * 42 does not exist"), so neither path can probe which hidden ids exist, and no computation runs
 * on a record the caller could not have chosen. One query per target model, as the caller.
 */
import { missingReference } from '../orm/missing-reference.js';
import type { Field } from '../orm/fields/field.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { inCondition } from '../orm/query/filter-ast.js';
import { QuerySet } from '../orm/queryset.js';

export interface GivenLink {
  /** The field the ids were given for (named by the refusal). */
  readonly field: Field;
  readonly target: ModelMeta;
  readonly ids: readonly number[];
}

/**
 * Throws the refusal of the first link naming a record the caller cannot read (archived records
 * are readable); a target model the caller may not read at all is a 403, as for a write.
 */
export async function assertReadableLinks(links: readonly GivenLink[]): Promise<void> {
  const byTarget = new Map<ModelMeta, Set<number>>();
  for (const { target, ids } of links) {
    if (!ids.length) continue;
    const set = byTarget.get(target) ?? byTarget.set(target, new Set()).get(target)!;
    for (const id of ids) set.add(id);
  }
  for (const [target, ids] of byTarget) {
    const found = new Set(await new QuerySet(target).with_archived().filter(inCondition(['id'], [...ids])).ids());
    for (const link of links) {
      if (link.target !== target) continue;
      const missing = link.ids.filter((id) => !found.has(id));
      if (missing.length) throw missingReference(link.field, target.name, missing);
    }
  }
}
