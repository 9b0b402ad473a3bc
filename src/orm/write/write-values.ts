/**
 * Sorts the values of a create or update into what they touch — columns, ManyToMany link sets,
 * OneToMany lines, setters of computed fields — converting and validating each through its field.
 * `publicValues` applies the write-key rules of spec §4.4 for values that come from a client:
 * keys that are unknown or not settable are dropped, never an error.
 */
import { BadRequest, ValidationError } from '../../errors.js';
import type { Field } from '../fields/field.js';
import { ManyToManyField, OneToManyField } from '../fields/relational-fields.js';
import { CREATE_ONLY_KEYS } from '../generic-fields.js';
import type { ModelMeta } from '../model-meta.js';

export type WriteMode = 'create' | 'update';

export interface SortedValues {
  columns: Map<Field, unknown>;
  manyToMany: [ManyToManyField, number[]][];
  oneToMany: [OneToManyField, unknown[]][];
  setters: [Field, unknown][];
}

const UPDATE_IGNORED = new Set(['identifier', 'created_date', 'created_by', 'updated_date', 'updated_by']);

export function assertObject(vals: unknown, what = 'The request body'): Record<string, unknown> {
  if (vals === null || typeof vals !== 'object' || Array.isArray(vals)) throw new BadRequest(`${what} must be an object of field values`);
  return vals as Record<string, unknown>;
}

/** Keeps only what a client may set (spec §4.4): ignored keys are dropped silently. */
export function publicValues(meta: ModelMeta, vals: unknown, mode: WriteMode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(assertObject(vals))) {
    const f = meta.fields.get(key);
    if (!f || key === 'id') continue;
    if (mode === 'update' && UPDATE_IGNORED.has(key)) continue;
    if (!(f.isSettable || (mode === 'create' && CREATE_ONLY_KEYS.has(key)))) continue;
    if (f instanceof OneToManyField && Array.isArray(value)) {
      // Lines follow the same rules against their own model: a line object with an `id` updates
      // that line (the id is kept so it is not turned into a new line), one without creates.
      out[key] = value.map((line) => {
        if (typeof line !== 'object' || line === null || Array.isArray(line)) return line;
        const lineId = (line as Record<string, unknown>).id;
        return typeof lineId === 'number'
          ? { ...publicValues(f.target, line, 'update'), id: lineId }
          : publicValues(f.target, line, 'create');
      });
      continue;
    }
    out[key] = value;
  }
  return out;
}

/** Converts trusted values (model code, data files, or `publicValues` output). */
export function sortValues(meta: ModelMeta, vals: Record<string, unknown>, mode: WriteMode): SortedValues {
  const sorted: SortedValues = { columns: new Map(), manyToMany: [], oneToMany: [], setters: [] };
  for (const [key, value] of Object.entries(vals)) {
    if (value === undefined || key === 'id') continue;
    const f = meta.fields.get(key);
    if (!f) throw new ValidationError(`${meta.name} has no field '${key.slice(0, 60)}'`);
    if (mode === 'update' && (key === 'created_date' || key === 'created_by')) continue;
    if (f.isComputed) {
      if (f.options.setter) sorted.setters.push([f, value]);
      else if (f.isEditableComputed) sorted.columns.set(f, f.toColumn(value));
      continue;
    }
    if (f instanceof ManyToManyField) {
      sorted.manyToMany.push([f, idList(f, value)]);
    } else if (f instanceof OneToManyField) {
      if (!Array.isArray(value)) throw new ValidationError(`Field '${key}' of ${meta.name} takes a list of lines or ids`);
      sorted.oneToMany.push([f, value]);
    } else if (f.column) {
      sorted.columns.set(f, f.toColumn(value));
    }
  }
  return sorted;
}

function idList(f: Field, value: unknown): number[] {
  if (value === null || value === false) return [];
  if (!Array.isArray(value)) throw new ValidationError(`Field '${f.name}' of ${f.model.name} takes a list of ids`);
  return [...new Set(value.map((v) => {
    const id = typeof v === 'object' && v !== null && 'id' in v ? (v as { id: unknown }).id : v;
    if (typeof id !== 'number' || !Number.isInteger(id) || id <= 0) {
      throw new ValidationError(`Field '${f.name}' of ${f.model.name} takes a list of ids; got ${JSON.stringify(v)?.slice(0, 40)}`);
    }
    return id;
  }))];
}

/** `Field 'name' of Task is required` when a required stored value is empty. */
export function checkRequired(meta: ModelMeta, columns: Map<Field, unknown>, mode: WriteMode): void {
  for (const f of meta.fields.values()) {
    if (!f.isRequired || !f.column || f.isComputed) continue;
    const present = columns.has(f);
    if (mode === 'update' && !present) continue;
    const v = columns.get(f);
    if (v === null || v === undefined || v === '') {
      throw new ValidationError(`Field '${f.name}' of ${meta.verboseName} is required`);
    }
  }
}
