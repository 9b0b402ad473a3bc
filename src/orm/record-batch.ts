/**
 * Records loaded together form a batch. Reading a relational field on one record loads it for
 * every record of the batch in one query (Odoo's prefetching), so model code that walks
 * `await line.product` over many lines — and recomputes of stored computed fields — is never N+1.
 */
import { sql } from '../db/sql-fragment.js';
import type { Field } from './fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField } from './fields/relational-fields.js';
import type { Model } from './model.js';
import type { ModelMeta } from './model-meta.js';
import { runSelect } from './execute-sql.js';
import { EMPTY_STATE, planSelect } from './query/select-plan.js';
import { inCondition } from './query/filter-ast.js';
import { relationSource, selectLinkedRows, selectRows, type Row } from './query/select-rows.js';

/**
 * Whether `record` is a draft, whose field assignments change only the record itself: a new
 * record (`Model.new`, id null) or a draft copy of a saved one (`RecordBatch.draftCopies`).
 */
export function isDraft(record: Model): boolean {
  return record._values.id === null || record._values.id === undefined || record._batch.drafts;
}

export class RecordBatch {
  readonly records: Model[] = [];
  /** Every record of the batch is a draft (see `isDraft`). */
  drafts = false;
  private readonly loaded = new Map<string, Promise<Map<number, unknown>>>();
  private readonly memo = new Map<string, Promise<unknown>>();
  /**
   * Relational values held by a record itself rather than loaded by id: to-many values assigned
   * to drafts (which have no rows to load them from), and links to other drafts (`linkDraft`).
   */
  private readonly draftRelations = new Map<Model, Map<string, Promise<unknown>>>();

  constructor(readonly meta: ModelMeta) {}

  /**
   * `count` new draft records in one batch (what `Model.new` makes): every column null, no lines
   * and no links; relations they are given later load for all of them at once.
   */
  static newDrafts(meta: ModelMeta, count: number): Model[] {
    const batch = new RecordBatch(meta);
    batch.drafts = true;
    for (const f of meta.fields.values()) {
      // A record not saved yet has no lines and no links.
      if (f instanceof OneToManyField || f instanceof ManyToManyField) batch.preload(f, new Map());
    }
    for (let i = 0; i < count; i++) {
      const row: Record<string, unknown> = { id: null };
      for (const f of meta.fields.values()) if (f.column) row[f.name] = null;
      batch.records.push(new meta.cls(row, batch));
    }
    return [...batch.records];
  }

  /**
   * Draft copies of saved records, in one batch: they read as the records do — their id, columns,
   * lines and links — and what is assigned on them changes only the copies (a form's draft of a
   * saved record, `ui-effect`).
   */
  static draftCopies(meta: ModelMeta, records: readonly Model[]): Model[] {
    const batch = new RecordBatch(meta);
    batch.drafts = true;
    for (const record of records) batch.records.push(new meta.cls({ ...record._values }, batch));
    return [...batch.records];
  }

  /**
   * Makes the relational `field` of `record` read `value` — another draft, or a list mixing drafts
   * and records — instead of what its stored value loads: a draft line's order is the draft order
   * of the same form, and that order's lines are the form's lines.
   */
  linkDraft(field: Field, record: Model, value: Model | null | readonly Model[]): void {
    const relations = this.draftRelations.get(record) ?? this.draftRelations.set(record, new Map()).get(record)!;
    relations.set(field.name, Promise.resolve(value));
  }

  /** `compute()` once per `key` for every record of the batch (see `Model.for_batch`). */
  shared<T>(key: string, compute: () => Promise<T>): Promise<T> {
    let value = this.memo.get(key) as Promise<T> | undefined;
    if (!value) this.memo.set(key, (value = compute()));
    return value;
  }

  /** Every stored field: what a record instance carries. */
  static storedFields(meta: ModelMeta): Field[] {
    return [...meta.fields.values()].filter((f) => f.column !== null);
  }

  /** Instantiates rows (carrying every stored field) as one batch of records. */
  static fromRows(meta: ModelMeta, rows: readonly Row[]): Model[] {
    const batch = new RecordBatch(meta);
    for (const row of rows) batch.records.push(new meta.cls(row, batch));
    return batch.records;
  }

  /** Loads records by id, in the order of `ids` (archived ones included, missing ones left out). */
  static async load(meta: ModelMeta, ids: readonly number[]): Promise<Model[]> {
    const unique = [...new Set(ids)];
    if (!unique.length) return [];
    const rows = await selectRows(meta, {
      ...EMPTY_STATE, activeTest: false, filters: [inCondition(['id'], unique)],
    }, RecordBatch.storedFields(meta));
    const records = RecordBatch.fromRows(meta, rows);
    const byId = new Map(records.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)).filter((r): r is Model => r !== undefined);
  }

  /**
   * How many records a to-many relation of `record` holds (the records `await record.<field>`
   * gives: active ones only), counted for the whole batch with one grouped query.
   */
  async relatedCount(field: OneToManyField | ManyToManyField, record: Model): Promise<number> {
    const key = `#count:${field.name}`;
    let pending = this.loaded.get(key);
    if (!pending) {
      pending = countRelated(field, this.records.map((r) => r.id));
      this.loaded.set(key, pending);
    }
    return ((await pending).get(record.id) as number | undefined) ?? 0;
  }

  /** Sets a relation's values for the batch without a query (`record id → value`; to-many default to empty). */
  preload(field: Field, values: Map<number, unknown>): void {
    this.loaded.set(field.name, Promise.resolve(values));
  }

  /**
   * A relational field was assigned on `record`: what was loaded for it no longer holds (the next
   * read loads it again, after the assignment is written). A draft keeps a to-many value itself:
   * ids and records as records, line values as draft lines.
   */
  assigned(field: Field, record: Model, value: unknown): void {
    this.loaded.delete(field.name);
    this.draftRelations.get(record)?.delete(field.name);
    if (!isDraft(record) || !(field instanceof OneToManyField || field instanceof ManyToManyField)) return;
    const items = Array.isArray(value) ? value : [];
    const target = field.target;
    const list = (async () => {
      const ids = items.filter((v): v is number => typeof v === 'number');
      const byId = new Map((await RecordBatch.load(target, ids)).map((r) => [r.id, r]));
      return items.flatMap((v): Model[] => {
        if (v instanceof target.cls) return [v as Model];
        if (typeof v === 'number') return byId.has(v) ? [byId.get(v)!] : [];
        if (v && typeof v === 'object' && !Array.isArray(v)) return [target.cls.new(v as Record<string, unknown>)];
        return [];
      });
    })();
    list.catch(() => undefined); // surfaces when read
    const relations = this.draftRelations.get(record) ?? this.draftRelations.set(record, new Map()).get(record)!;
    relations.set(field.name, list);
  }

  /** What `record` holds itself for a relational field (a draft's assigned lines, a linked draft), if anything. */
  held(record: Model, fieldName: string): Promise<unknown> | undefined {
    return this.draftRelations.get(record)?.get(fieldName);
  }

  /** The value of a relational field for `record`, loading it for the whole batch once. */
  async relation(field: Field, record: Model): Promise<unknown> {
    const held = this.draftRelations.get(record)?.get(field.name);
    if (held) return held;
    let pending = this.loaded.get(field.name);
    if (!pending) {
      pending = this.loadRelation(field);
      this.loaded.set(field.name, pending);
    }
    const map = await pending;
    if (field instanceof ManyToOneField) {
      const id = record._values[field.name] as number | null;
      return id === null || id === undefined ? null : (map.get(id) ?? null);
    }
    return map.get(record.id) ?? [];
  }

  private async loadRelation(field: Field): Promise<Map<number, unknown>> {
    const map = new Map<number, unknown>();
    const ids = this.records.map((r) => r.id);
    if (field instanceof ManyToOneField) {
      const targetIds = this.records.map((r) => r._values[field.name]).filter((v): v is number => typeof v === 'number');
      for (const rec of await RecordBatch.load(field.target, targetIds)) map.set(rec.id, rec);
    } else if (field instanceof OneToManyField || field instanceof ManyToManyField) {
      const rows = await selectLinkedRows(field, ids, EMPTY_STATE, RecordBatch.storedFields(field.target));
      // One record per target even when several parents link it (ManyToMany).
      const targets = new Map(RecordBatch.fromRows(field.target, rows).map((r) => [r.id, r]));
      for (const row of rows) {
        const parent = row.__parent as number;
        ((map.get(parent) as Model[] | undefined) ?? (map.set(parent, []).get(parent) as Model[])).push(targets.get(row.id as number)!);
      }
    }
    return map;
  }
}

/** `parent id → number of related records` for a to-many relation, in one grouped query. */
async function countRelated(field: OneToManyField | ManyToManyField, ids: readonly (number | null)[]): Promise<Map<number, unknown>> {
  const parents = ids.filter((id): id is number => typeof id === 'number');
  if (!parents.length) return new Map();
  const { scope, where } = planSelect(field.target, EMPTY_STATE);
  const { from, parent } = relationSource(field, scope);
  const rows = await runSelect<{ parent: number; n: number }>(sql`${parent} AS parent, count(*)::int AS n`,
    sql`FROM ${from} WHERE ${parent} = ANY(${parents}) AND ${where} GROUP BY 1`);
  return new Map(rows.map((r) => [r.parent, r.n]));
}
