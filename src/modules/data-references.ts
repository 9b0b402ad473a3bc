/**
 * Relational values of data records, resolved a batch at a time: a reference is an identifier
 * (qualified across modules) or an id. The identifiers a batch names are looked up with one query
 * per target model, and every id found or created during the module's load is remembered, so a
 * later batch asks again only for what it has not seen. A reference to a record of the module
 * that has yet to load makes its record wait (the loader retries it on its next pass).
 */
import { ModuleError } from '../errors.js';
import { ManyToManyField, ManyToOneField, OneToManyField } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { inCondition } from '../orm/query/filter-ast.js';
import { EMPTY_STATE } from '../orm/query/select-plan.js';
import { selectRows } from '../orm/query/select-rows.js';
import { qualify, recordWhere, type DataRecord } from './data-files.js';

/** `Model:identifier`, how the loader names a record it waits for. */
export function recordKey(model: string, identifier: string): string {
  return `${model}:${identifier}`;
}

/**
 * Ids by identifier, of the records one module load has found or created — and the identifiers
 * looked up in vain: those can only be records of the module still waiting to load, which the
 * loader itself will create (and `set`), so asking the database again is of no use.
 */
export class IdentifierIndex {
  readonly #ids = new Map<string, number>();
  readonly #missing = new Set<string>();

  get(model: string, identifier: string): number | undefined {
    return this.#ids.get(recordKey(model, identifier));
  }

  set(model: string, identifier: string, id: number): void {
    const key = recordKey(model, identifier);
    this.#ids.set(key, id);
    this.#missing.delete(key);
  }

  /** Looks up the identifiers not seen yet: one query per model (archived records included). */
  async fetch(wanted: ReadonlyMap<ModelMeta, ReadonlySet<string>>): Promise<void> {
    for (const [meta, identifiers] of wanted) {
      const unseen = [...identifiers].filter((identifier) => {
        const key = recordKey(meta.name, identifier);
        return !this.#ids.has(key) && !this.#missing.has(key);
      });
      if (!unseen.length) continue;
      const rows = await selectRows(meta, { ...EMPTY_STATE, activeTest: false, filters: [inCondition(['identifier'], unseen)] },
        [meta.fields.get('identifier')!]);
      for (const row of rows) this.set(meta.name, String(row.identifier), row.id as number);
      for (const identifier of unseen) if (this.get(meta.name, identifier) === undefined) this.#missing.add(recordKey(meta.name, identifier));
    }
  }
}

export interface ResolvedRecord {
  rec: DataRecord;
  /** The record's values with references as ids. */
  vals: Record<string, unknown>;
}

/**
 * The batch's records (all of model `meta`) with their references as ids (`ready`), and those
 * that wait for a record still `pending` in this load. A field that cannot be set, a reference
 * that is no identifier, or one to a record that neither exists nor is pending, is a ModuleError
 * naming the record.
 */
export async function resolveReferences(
  moduleId: string, meta: ModelMeta, records: readonly DataRecord[], pending: ReadonlySet<string>, index: IdentifierIndex,
): Promise<{ ready: ResolvedRecord[]; waiting: DataRecord[] }> {
  const wanted = new Map<ModelMeta, Set<string>>();
  const want = (target: ModelMeta, ref: unknown, where: string): void => {
    if (typeof ref === 'number') return;
    if (typeof ref !== 'string') throw new ModuleError(`${where}: a reference is an identifier string`);
    (wanted.get(target) ?? wanted.set(target, new Set()).get(target)!).add(qualify(moduleId, ref));
  };
  for (const rec of records) {
    const where = recordWhere(rec);
    for (const [key, value] of Object.entries(rec.values)) {
      const f = meta.fields.get(key);
      if (!f || f.isComputed && !f.options.setter && !f.isEditableComputed || ['id', 'display_name'].includes(key)) {
        throw new ModuleError(`${where}: ${rec.model} has no settable field '${key}'`);
      }
      if (f instanceof ManyToOneField) {
        if (value !== null) want(f.target, value, where);
      } else if (f instanceof ManyToManyField) {
        if (!Array.isArray(value)) throw new ModuleError(`${where}: '${f.name}' takes a list of identifiers`);
        for (const ref of value) want(f.target, ref, where);
      } else if (f instanceof OneToManyField) {
        throw new ModuleError(`${where}: set '${f.name}' from the lines' side (their '${f.inverseName}')`);
      }
    }
  }
  await index.fetch(wanted);

  const ready: ResolvedRecord[] = [];
  const waiting: DataRecord[] = [];
  for (const rec of records) {
    let waits = false;
    const idOf = (target: ModelMeta, ref: unknown): number | null => {
      if (typeof ref === 'number') return ref;
      const identifier = qualify(moduleId, ref as string);
      const id = index.get(target.name, identifier);
      if (id !== undefined) return id;
      if (!pending.has(recordKey(target.name, identifier))) {
        throw new ModuleError(`${recordWhere(rec)}: no ${target.name} with identifier '${identifier}'`);
      }
      waits = true;
      return null;
    };
    const vals: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(rec.values)) {
      const f = meta.fields.get(key)!;
      if (f instanceof ManyToOneField) vals[key] = value === null ? null : idOf(f.target, value);
      else if (f instanceof ManyToManyField) vals[key] = (value as unknown[]).map((ref) => idOf(f.target, ref));
      else vals[key] = value;
    }
    if (waits) waiting.push(rec);
    else ready.push({ rec, vals });
  }
  return { ready, waiting };
}
