/**
 * Links shown as a fetch shows a bare link (`fields: ['assignee']`): `{id, display_name}`. The
 * name belongs to the record holding the link, so a target hidden only by a record rule or a
 * company keeps its name, and a model the caller has no right to read shows a null name
 * (`orm/read/read-records.ts`, `isNameless`). Used for values the platform proposes — wizard
 * defaults, a form's changed links — which are links of the record or dialog being edited.
 */
import { withEnv } from '../orm/env.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { inCondition } from '../orm/query/filter-ast.js';
import { QuerySet } from '../orm/queryset.js';
import { mayReadModel } from '../orm/read/read-records.js';

export interface NamedLink {
  id: number;
  display_name: string | null;
}

/** Collects the ids to name per target model, then names them all with one query per model. */
export class LinkNames {
  private readonly wanted = new Map<ModelMeta, Set<number>>();
  private readonly names = new Map<ModelMeta, Map<number, string | null>>();

  want(target: ModelMeta, ids: Iterable<number>): void {
    const set = this.wanted.get(target) ?? this.wanted.set(target, new Set()).get(target)!;
    for (const id of ids) set.add(id);
  }

  async load(): Promise<void> {
    for (const [target, ids] of this.wanted) {
      const named = new Map<number, string | null>();
      this.names.set(target, named);
      if (!ids.size || !mayReadModel(target)) continue;
      const rows = await withEnv({ su: true }, () =>
        new QuerySet(target).with_archived().filter(inCondition(['id'], [...ids])).read(['display_name']));
      for (const row of rows) named.set(row.id as number, (row.display_name as string | null) ?? null);
    }
  }

  /** `{id, display_name}` of a loaded id (null name when unknown or unreadable). */
  link(target: ModelMeta, id: number): NamedLink {
    return { id, display_name: this.names.get(target)?.get(id) ?? null };
  }
}
