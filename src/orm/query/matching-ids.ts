/**
 * The ids of the records matching a filter, archived ones included, read as the caller (its rules
 * apply) — what `QuerySet.with_archived().filter(…).ids()` answers, for the write path, which
 * sits below the queryset (a queryset writes through it) and so cannot build one.
 */
import type { ModelMeta } from '../model-meta.js';
import type { FilterNode } from './filter-ast.js';
import { EMPTY_STATE } from './select-plan.js';
import { selectRows } from './select-rows.js';

export async function matchingIds(meta: ModelMeta, filter: FilterNode): Promise<number[]> {
  const rows = await selectRows(meta, { ...EMPTY_STATE, activeTest: false, filters: [filter] }, []);
  return rows.map((row) => row.id as number);
}
