/**
 * What each column of an import is (spec §4.8): its `fields` path read against the model —
 * `id` (match by database id), `identifier` (the external id), a field of the record, a relation
 * with how its cells are looked up (`contact` by identifier, id or display name,
 * `contact/identifier`, `tags/ID`, `contact/name` by that field), or a field of a OneToMany line
 * (`order_lines/product`, `order_lines/product/identifier`). An unknown path is a 400. A column for
 * a field no client may set is ignored (spec §4.4 rule 1), as a create body ignores such a key, and
 * so is a column whose path is "" (left unmapped in an import dialog).
 */
import { BadRequest } from '../../errors.js';
import type { Field } from '../../orm/fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField } from '../../orm/fields/relational-fields.js';
import { CREATE_ONLY_KEYS } from '../../orm/generic-fields.js';
import type { ModelMeta } from '../../orm/model-meta.js';

/** How a relation column finds its target records. */
export type LookupMode =
  | { readonly kind: 'auto' }
  | { readonly kind: 'identifier' }
  | { readonly kind: 'id' }
  | { readonly kind: 'field'; readonly field: Field };

export interface ValueColumn {
  /** Position in `fields` and in each row. */
  readonly index: number;
  readonly path: string;
  /** The field written, on the record's model or the line's. */
  readonly field: Field;
  /** For ManyToOne and ManyToMany columns. */
  readonly lookup: LookupMode | null;
  /** `create_fields` at this column: a missing target is created. */
  readonly create: boolean;
}

export interface LineColumns {
  readonly field: OneToManyField;
  readonly columns: readonly ValueColumn[];
}

export interface ImportColumns {
  /** The `id` column (match by database id). */
  readonly idColumn: number | null;
  /** The `identifier` column (match by external id; written on create). */
  readonly identifierColumn: number | null;
  /** The record's own value columns (the identifier column included). */
  readonly record: readonly ValueColumn[];
  readonly lines: readonly LineColumns[];
  /** Columns of fields not settable by a client: read by nothing. */
  readonly ignored: ReadonlySet<number>;
}

export function readColumns(meta: ModelMeta, paths: readonly string[], createFields: readonly boolean[]): ImportColumns {
  let idColumn: number | null = null;
  let identifierColumn: number | null = null;
  const record: ValueColumn[] = [];
  const lines = new Map<OneToManyField, ValueColumn[]>();
  const ignored = new Set<number>();
  const seen = new Set<string>();
  paths.forEach((path, index) => {
    if (path === '') {
      ignored.add(index);
      return;
    }
    if (seen.has(path)) throw new BadRequest(`Field path '${path.slice(0, 80)}' is given twice in 'fields'`);
    seen.add(path);
    const [head, ...rest] = path.split('/');
    if (head === 'id' && !rest.length) {
      idColumn = index;
      return;
    }
    const field = publicField(meta, head!, path);
    if (field instanceof OneToManyField) {
      if (!rest.length) throw new BadRequest(`Field path '${path}': name a field of the ${field.targetName} lines, e.g. '${path}/${field.target.recName ?? 'name'}'`);
      const [sub, ...subRest] = rest;
      if (sub === 'id' || sub === field.inverseName) throw new BadRequest(`Field path '${path}': imported lines are created with their record; '${sub}' cannot be imported`);
      const subField = publicField(field.target, sub!, path);
      if (subField instanceof OneToManyField) throw new BadRequest(`Field path '${path}': lines of lines cannot be imported`);
      const column = valueColumn(subField, subRest, path, index, createFields[index] ?? false);
      if (!isImportable(subField)) ignored.add(index);
      else (lines.get(field) ?? lines.set(field, []).get(field)!).push(column);
      return;
    }
    const column = valueColumn(field, rest, path, index, createFields[index] ?? false);
    if (field.name === 'identifier' && !rest.length) identifierColumn = index;
    if (!isImportable(field)) ignored.add(index);
    else record.push(column);
  });
  return { idColumn, identifierColumn, record, lines: [...lines].map(([field, columns]) => ({ field, columns })), ignored };
}

/** A field of `meta` a client may name (internal fields are as unknown). */
function publicField(meta: ModelMeta, name: string, path: string): Field {
  const field = meta.fields.get(name);
  if (!field || field.options.internal || name === 'display_name') {
    throw new BadRequest(`Unknown field path '${path.slice(0, 80)}': ${meta.name} has no field '${name.slice(0, 60)}'`);
  }
  if (field.type === 'File') throw new BadRequest(`Field path '${path}': files cannot be imported from a spreadsheet`);
  return field;
}

/** Settable on create or update by a client (spec §4.4), or a create-only key. */
function isImportable(field: Field): boolean {
  return field.isSettable || CREATE_ONLY_KEYS.has(field.name);
}

function valueColumn(field: Field, rest: readonly string[], path: string, index: number, create: boolean): ValueColumn {
  if (!(field instanceof ManyToOneField || field instanceof ManyToManyField)) {
    if (rest.length) throw new BadRequest(`Unknown field path '${path.slice(0, 80)}': '${field.name}' is not a relation`);
    return { index, path, field, lookup: null, create: false };
  }
  if (rest.length > 1) throw new BadRequest(`Unknown field path '${path.slice(0, 80)}': a relation is looked up by one field of its target`);
  const sub = rest[0];
  let lookup: LookupMode;
  if (sub === undefined) lookup = { kind: 'auto' };
  else if (sub === 'identifier') lookup = { kind: 'identifier' };
  else if (sub === 'id' || sub === 'ID' || sub === '.id') lookup = { kind: 'id' };
  else {
    const target = field.target.fields.get(sub);
    if (!target || target.options.internal || !target.column || target.isRelational || target.type === 'Binary' || target.type === 'Json') {
      throw new BadRequest(`Unknown field path '${path.slice(0, 80)}': ${field.targetName} has no stored field '${sub.slice(0, 60)}' to look records up by`);
    }
    lookup = { kind: 'field', field: target };
  }
  return { index, path, field, lookup, create };
}

/**
 * The fields of `match_fields`: stored fields of the record (not to-many), each given by some
 * column (a relation column of any lookup gives its field), or `identifier` / `id`.
 */
export function readMatchFields(meta: ModelMeta, matchFields: readonly string[], columns: ImportColumns): Field[] {
  return matchFields.map((name) => {
    const field = meta.fields.get(name);
    if (!field || field.options.internal || (!field.column && name !== 'id')) {
      throw new BadRequest(`'match_fields': ${meta.name} has no stored field '${name.slice(0, 60)}'`);
    }
    const given = name === 'id' ? columns.idColumn !== null : columns.record.some((c) => c.field === field);
    if (!given) throw new BadRequest(`'match_fields': '${name}' is not one of the imported columns`);
    return field;
  });
}
