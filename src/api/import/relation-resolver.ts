/**
 * Relation cells of one batch resolved to record ids, set-based: one query per relation column
 * per batch for all its distinct values (CONTRACTS C3). A bare column (`customer`, `tags`)
 * resolves each value by external identifier, then database id, then exact display name — two
 * records of that name make the value ambiguous; `…/identifier` only by identifier, `…/ID` only
 * by id, `…/<field>` by that field. Only records the caller can read are found, archived ones
 * included (a name prefers an active record). With `create_fields` at the column, a name no record
 * has becomes a new target record, created for the whole batch by one create call.
 */
import type { FilterNode } from '../../orm/query/filter-ast.js';
import { inCondition } from '../../orm/query/filter-ast.js';
import { EMPTY_STATE } from '../../orm/query/select-plan.js';
import { selectRows, type Row } from '../../orm/query/select-rows.js';
import { isRecordId, type ManyToManyField, type ManyToOneField } from '../../orm/fields/relational-fields.js';
import type { Field } from '../../orm/fields/field.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { createRecords } from '../../orm/write/create-records.js';
import { CellError, cellValue, columnOf } from './cell-values.js';
import type { ValueColumn } from './import-columns.js';
import { inSavepoint } from './savepoint.js';

/** Per distinct cell text, the record id it stands for, or why it stands for none. */
export type Resolution = Map<string, number | { readonly error: string }>;

export interface ResolveOptions {
  /** Create missing targets (`create_fields` at the column). */
  readonly create: boolean;
}

export async function resolveColumn(column: ValueColumn, texts: readonly string[], options: ResolveOptions): Promise<Resolution> {
  const field = column.field as ManyToOneField | ManyToManyField;
  const target = field.target;
  const lookup = column.lookup!;
  const out: Resolution = new Map();
  if (!texts.length) return out;
  const what = target.verboseName;
  switch (lookup.kind) {
    case 'identifier': {
      const rows = await select(target, inCondition(['identifier'], texts), [target.fields.get('identifier')!]);
      const byIdentifier = new Map(rows.map((r) => [r.identifier as string, r.id as number]));
      for (const t of texts) out.set(t, byIdentifier.get(t) ?? { error: `no ${what} has the identifier '${t}'` });
      return out;
    }
    case 'id': {
      const ids = texts.map(idOf).filter(isRecordId);
      const found = new Set((ids.length ? await select(target, inCondition(['id'], ids), []) : []).map((r) => r.id as number));
      for (const t of texts) {
        const id = idOf(t);
        out.set(t, isRecordId(id) && found.has(id) ? id : { error: isRecordId(id) ? `no ${what} has the id ${id}` : `'${t}' is not a record id` });
      }
      return out;
    }
    case 'field':
      return byField(target, lookup.field, texts, options, out);
    case 'auto':
      return byAnyKey(target, texts, options, out);
  }
}

/** By identifier, then id, then exact display name (the `_rec_name` field). */
async function byAnyKey(target: ModelMeta, texts: readonly string[], options: ResolveOptions, out: Resolution): Promise<Resolution> {
  const nameField = target.recName ? target.fields.get(target.recName)! : null;
  const ids = texts.map(idOf).filter(isRecordId);
  const names = nameField ? typedValues(nameField, texts) : new Map<string, unknown>();
  const children: FilterNode[] = [inCondition(['identifier'], texts)];
  if (ids.length) children.push(inCondition(['id'], ids));
  if (names.size) children.push(inCondition([nameField!.name], [...new Set(names.values())] as string[]));
  const list = [target.fields.get('identifier')!, ...(nameField ? [nameField] : []), ...activeField(target)];
  const rows = await select(target, children.length > 1 ? { kind: 'or', children } : children[0]!, list);
  const byIdentifier = new Map<string, number>();
  const byId = new Set<number>();
  const byName = new Map<string, Row[]>();
  for (const r of rows) {
    if (r.identifier !== null) byIdentifier.set(r.identifier as string, r.id as number);
    byId.add(r.id as number);
    if (nameField) {
      const key = String(r[nameField.name]);
      (byName.get(key) ?? byName.set(key, []).get(key)!).push(r);
    }
  }
  const missing: string[] = [];
  for (const t of texts) {
    const identified = byIdentifier.get(t);
    if (identified !== undefined) {
      out.set(t, identified);
      continue;
    }
    const id = idOf(t);
    if (isRecordId(id) && byId.has(id)) {
      out.set(t, id);
      continue;
    }
    const named = names.has(t) ? preferActive(byName.get(String(names.get(t))) ?? []) : [];
    if (named.length === 1) out.set(t, named[0]!.id as number);
    else if (named.length > 1) out.set(t, { error: `'${t}' is ambiguous: ${named.length} ${target.verboseName} records have that name` });
    else missing.push(t);
  }
  const how = nameField ? 'identifier, id or name' : 'identifier or id';
  await createMissing(target, nameField, missing, names, options, out, `no ${target.verboseName} matches '%s' (by ${how})`);
  return out;
}

/** By the value of one stored field of the target. */
async function byField(target: ModelMeta, field: Field, texts: readonly string[], options: ResolveOptions, out: Resolution): Promise<Resolution> {
  const values = typedValues(field, texts);
  for (const t of texts) if (!values.has(t)) out.set(t, { error: `'${t}' is not a valid ${field.name} of ${target.verboseName}` });
  const distinct = [...new Set(values.values())] as (string | number)[];
  const rows = distinct.length ? await select(target, inCondition([field.name], distinct), [field, ...activeField(target)]) : [];
  const byValue = new Map<string, Row[]>();
  for (const r of rows) {
    const key = String(r[field.name]);
    (byValue.get(key) ?? byValue.set(key, []).get(key)!).push(r);
  }
  const missing: string[] = [];
  for (const [t, v] of values) {
    const found = preferActive(byValue.get(String(v)) ?? []);
    if (found.length === 1) out.set(t, found[0]!.id as number);
    else if (found.length > 1) out.set(t, { error: `'${t}' is ambiguous: ${found.length} ${target.verboseName} records have that ${field.name}` });
    else missing.push(t);
  }
  await createMissing(target, field, missing, values, options, out, `no ${target.verboseName} has the ${field.name} '%s'`);
  return out;
}

/**
 * Creates the targets of `missing` texts (one create call), when the column asks for it and there
 * is a field to name them by; otherwise, and when the create is refused, each is an error.
 */
async function createMissing(
  target: ModelMeta, nameField: Field | null, missing: readonly string[], values: ReadonlyMap<string, unknown>,
  options: ResolveOptions, out: Resolution, notFound: string,
): Promise<void> {
  if (!missing.length) return;
  if (!options.create || !nameField) {
    for (const t of missing) out.set(t, { error: notFound.replace('%s', t) });
    return;
  }
  // One target per distinct value, even when several texts read as the same value.
  const distinct = [...new Set(missing.map((t) => values.get(t)))];
  const made = await inSavepoint(() => createRecords(target, distinct.map((v) => ({ [nameField.name]: v }))));
  for (const t of missing) {
    out.set(t, made.ok
      ? made.value[distinct.indexOf(values.get(t))]!.id
      : { error: `no ${target.verboseName} matches '${t}', and creating it was refused: ${made.error.message}` });
  }
}

/** Each text as a value of `field` (texts that are no such value are left out). */
function typedValues(field: Field, texts: readonly string[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const t of texts) {
    try {
      const v = columnOf(field, cellValue(field, t, null));
      if (v !== null && v !== undefined) out.set(t, v);
    } catch (err) {
      if (!(err instanceof CellError)) throw err;
    }
  }
  return out;
}

/** Of several records, the active ones when there are any (an archived record is a last resort). */
function preferActive(rows: Row[]): Row[] {
  if (rows.length < 2 || !rows.some((r) => 'active' in r)) return rows;
  const active = rows.filter((r) => r.active === true);
  return active.length ? active : rows;
}

function activeField(meta: ModelMeta): Field[] {
  return meta.isArchivable ? [meta.fields.get('active')!] : [];
}

function idOf(text: string): number {
  return /^\d+$/.test(text) ? Number(text) : NaN;
}

/** Rows of `meta` matching `filter`, archived ones included, as the caller may read them. */
function select(meta: ModelMeta, filter: FilterNode, fields: readonly Field[]): Promise<Row[]> {
  return selectRows(meta, { ...EMPTY_STATE, filters: [filter], activeTest: false, publicOnly: true, order: ['id ASC'] }, fields);
}
