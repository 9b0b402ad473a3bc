/**
 * Sorts the values of a create or update into what they touch — columns, ManyToMany link sets,
 * OneToMany lines, setters of computed fields — converting and validating each through its field.
 * `publicValues` applies the write-key rules of spec §4.4 for values that come from a client:
 * keys that are unknown or not settable are dropped, never an error.
 */
import { BadRequest, ValidationError } from '../../errors.js';
import type { Field } from '../fields/field.js';
import { showValue } from '../fields/field.js';
import { ManyToManyField, OneToManyField, isRecordId } from '../fields/relational-fields.js';
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
        if (lineId === undefined || lineId === null) return publicValues(f.target, line, 'create');
        // A line naming an id updates that line: an id that is no id is refused, not taken for a new line.
        if (!isRecordId(lineId)) throw lineIdError(f, lineId);
        return { ...publicValues(f.target, line, 'update'), id: lineId };
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
  // Keys, then values (as `Object.entries` gives them, without an array per key).
  for (const key of Object.keys(vals)) {
    const value = vals[key];
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
      if (!Array.isArray(value)) throw new ValidationError(`Field '${key}' of ${meta.name} takes a list of lines or ids`, { field: key, model: meta.name });
      sorted.oneToMany.push([f, value]);
    } else if (f.column) {
      sorted.columns.set(f, f.toColumn(value));
    }
  }
  return sorted;
}

/** The refusal of a OneToMany line id that is not a record id. */
export function lineIdError(f: OneToManyField, value: unknown): ValidationError {
  return new ValidationError(`Field '${f.name}' of ${f.model.name} takes ${f.targetName} lines: objects (with the id of an existing line to change it) or ids (integers from 1 to 2147483647); got ${showValue(value)}`, { field: f.name, model: f.model.name });
}

function idList(f: ManyToManyField, value: unknown): number[] {
  if (value === null || value === false) return [];
  if (!Array.isArray(value)) throw new ValidationError(`Field '${f.name}' of ${f.model.name} takes a list of ids`, { field: f.name, model: f.model.name });
  return [...new Set(value.map((v) => {
    const id = typeof v === 'object' && v !== null && 'id' in v ? (v as { id: unknown }).id : v;
    if (!isRecordId(id)) {
      throw new ValidationError(`Field '${f.name}' of ${f.model.name} takes a list of ${f.targetName} ids (integers from 1 to 2147483647); got ${showValue(v)}`, { field: f.name, model: f.model.name });
    }
    return id;
  }))];
}

/**
 * `Field 'name' of Task is required` when a required stored value is empty. `required`: the
 * model's required stored, not computed fields in its field order, when the caller looked them up
 * once for many records (as `createRecords` does).
 */
export function checkRequired(meta: ModelMeta, columns: Map<Field, unknown>, mode: WriteMode, required?: readonly Field[]): void {
  for (const f of required ?? meta.fields.values()) {
    if (!f.isRequired || !f.column || f.isComputed) continue;
    const present = columns.has(f);
    if (mode === 'update' && !present) continue;
    const v = columns.get(f);
    if (v === null || v === undefined || v === '') {
      throw new ValidationError(`Field '${f.name}' of ${meta.verboseName} is required`, { field: f.name, model: meta.name });
    }
  }
}
