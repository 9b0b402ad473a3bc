/**
 * The dependency graph of stored computed fields: for each `<model>.<field>` that can change,
 * which stored computed fields must be recomputed and how to find their records from the changed
 * ones (`prefix`, a relational path from the computed field's model to the changed model). A
 * OneToMany step also listens to the inverse ManyToOne, so moving or creating a line recomputes
 * its parents; a ManyToMany step listens to the target's deletions and reverse field.
 */
import { ModuleError } from '../errors.js';
import type { Field } from './fields/field.js';
import { ManyToManyField, OneToManyField, RelationalField } from './fields/relational-fields.js';
import type { ModelMeta } from './model-meta.js';
import type { Registry } from './registry.js';

export interface RecomputeTrigger {
  /** Model holding the computed field. */
  readonly owner: ModelMeta;
  readonly field: Field;
  /** Relational path from `owner` to the changed model; empty when they are the same records. */
  readonly prefix: readonly string[];
}

export function buildRecomputeTriggers(registry: Registry): Map<string, RecomputeTrigger[]> {
  const triggers = new Map<string, RecomputeTrigger[]>();
  const add = (key: string, t: RecomputeTrigger) => {
    const list = triggers.get(key) ?? [];
    if (!list.some((x) => x.owner === t.owner && x.field === t.field && x.prefix.join() === t.prefix.join())) list.push(t);
    triggers.set(key, list);
  };
  for (const owner of registry.models.values()) {
    for (const field of owner.fields.values()) {
      if (!field.isComputed || !field.isStored || !field.options.calculate) continue;
      for (const dep of field.options.depends ?? []) {
        const segs = dep.split('.');
        let cur = owner;
        const prefix: string[] = [];
        segs.forEach((seg, i) => {
          const f = cur.fields.get(seg);
          if (!f) throw new ModuleError(`${owner.name}.${field.name}: depends path '${dep}' names unknown field '${seg}' of ${cur.name}`);
          add(`${cur.name}.${seg}`, { owner, field, prefix: [...prefix] });
          if (f instanceof OneToManyField) add(`${f.target.name}.${f.inverseName}`, { owner, field, prefix: [...prefix, seg] });
          if (f instanceof ManyToManyField) {
            // Links also change from the target's side: when a target record is deleted (its links
            // go with it; `id` is never written, so only create/delete fire it) and through the
            // reverse field of a related_name.
            add(`${f.target.name}.id`, { owner, field, prefix: [...prefix, seg] });
            for (const r of f.target.fields.values()) {
              if (r instanceof ManyToManyField && r !== f && r.join?.table === f.join.table && r.join.sourceColumn === f.join.targetColumn) {
                add(`${f.target.name}.${r.name}`, { owner, field, prefix: [...prefix, seg] });
              }
            }
          }
          if (i < segs.length - 1) {
            if (!(f instanceof RelationalField)) {
              throw new ModuleError(`${owner.name}.${field.name}: depends path '${dep}' goes through '${seg}', which is not a relation`);
            }
            prefix.push(seg);
            cur = f.target;
          }
        });
      }
    }
  }
  return triggers;
}
