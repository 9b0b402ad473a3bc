/**
 * Computes a new record's own stored computed fields before it is inserted, so they go into the
 * INSERT instead of costing a reload and an UPDATE afterwards (as Odoo computes new records in
 * its cache before flushing them). This applies to a field whose `depends` all start at the
 * record's own plain fields, its ManyToOne links (loaded as they are in the database), or
 * to-many relations the create does not write (a new record has no lines yet, so they read as
 * empty). Everything else — to-many relations written by the create, setters, fields without
 * `depends` — is recomputed after the INSERT as before. A compute method running here sees
 * `this.id` as null: one that queries by its own id must depend on something written after the
 * INSERT, or declare no `depends`.
 */
import { currentEnv, withEnv } from '../env.js';
import type { Field } from '../fields/field.js';
import { ManyToOneField, RelationalField } from '../fields/relational-fields.js';
import type { Model } from '../model.js';
import type { ModelMeta } from '../model-meta.js';
import { RecordBatch } from '../record-batch.js';
import type { SortedValues } from './write-values.js';
import { atItemAsync, type ItemIndexes } from './item-errors.js';

/**
 * The stored computed fields of `meta` that can be computed before the INSERT, in an order where
 * each comes after the computed fields of the same record it depends on.
 */
export function precomputableFields(meta: ModelMeta, writtenRelations: ReadonlySet<Field>): Field[] {
  const order: Field[] = [];
  const verdict = new Map<Field, boolean>();
  const visit = (field: Field, path: Set<Field>): boolean => {
    const known = verdict.get(field);
    if (known !== undefined) return known;
    if (path.has(field)) return false; // a cycle among computed fields: leave it to the recompute
    path.add(field);
    const depends = field.options.depends ?? [];
    let ok = depends.length > 0;
    for (const dep of depends) {
      const first = meta.fields.get(dep.split('.')[0]!);
      if (!first || !ok) { ok = false; break; }
      if (first.isComputed && first.isStored && first !== field) ok = visit(first, path);
      else if (first instanceof RelationalField && !(first instanceof ManyToOneField)) ok = !writtenRelations.has(first);
      else if (first instanceof ManyToOneField) ok = first.column !== null;
      else ok = first.column !== null || first.name === 'display_name';
    }
    path.delete(field);
    verdict.set(field, ok);
    if (ok) order.push(field);
    return ok;
  };
  for (const f of meta.fields.values()) if (f.isComputed && f.isStored && f.options.calculate) visit(f, new Set());
  return order;
}

/**
 * Runs the compute methods of `fields` on in-memory records built from the values about to be
 * inserted, and adds the results to those values.
 */
export async function precompute(meta: ModelMeta, sortedList: SortedValues[], fields: readonly Field[], items?: ItemIndexes): Promise<void> {
  // Computed as the platform, like every stored computed value (recompute.ts).
  if (!currentEnv().su) return withEnv({ su: true }, () => precompute(meta, sortedList, fields, items));
  const batch = new RecordBatch(meta);
  for (const f of meta.fields.values()) {
    // A record that does not exist yet has no lines and no links (the create writes none of these).
    if (f instanceof RelationalField && !(f instanceof ManyToOneField)) batch.preload(f, new Map());
  }
  const records: Model[] = sortedList.map((sorted) => {
    const row: Record<string, unknown> = { id: null };
    for (const f of meta.fields.values()) if (f.column) row[f.name] = null;
    for (const [f, value] of sorted.columns) row[f.name] = asLoaded(f, value);
    const rec = new meta.cls(row, batch);
    batch.records.push(rec);
    return rec;
  });
  for (const field of fields) {
    const method = field.options.calculate!;
    // An editable computed field keeps the value the create gives it (`editable: true`).
    const given = (i: number) => field.isEditableComputed && sortedList[i]!.columns.has(field);
    // A compute refusing one record's values (a unit of another category) names that record's item.
    const values = await Promise.all(records.map((r, i) => (given(i) ? undefined : atItemAsync(items?.[i], () => (r as any)[method]()))));
    records.forEach((rec, i) => {
      if (given(i)) return;
      const value = field.toColumn(values[i] ?? null);
      rec._values[field.name] = asLoaded(field, value);
      sortedList[i]!.columns.set(field, value);
    });
  }
}

/** A column value as written, in the form the driver returns it when read (Json is sent as text). */
export function asLoaded(field: Field, value: unknown): unknown {
  return field.type === 'Json' && typeof value === 'string' ? JSON.parse(value) : value;
}
