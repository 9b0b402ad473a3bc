/**
 * Executes a select plan: the rows of a model that a query state selects, with the requested
 * stored fields as columns named after the fields (a ManyToOne column comes back as the id under
 * the field's name). Optionally rows are fetched through a ManyToMany join table, carrying the
 * linking parent id as `__parent`.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import type { Field } from '../fields/field.js';
import { OneToManyField, type ManyToManyField } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';
import { runSelect } from '../execute-sql.js';
import type { QueryScope } from './query-scope.js';
import { orderAndPage, planSelect, type QueryState } from './select-plan.js';

export type Row = Record<string, unknown>;

/** What a SELECT returns: stored fields as plain columns, or a builder given the query's scope (joins). */
export type SelectList = readonly Field[] | ((scope: QueryScope) => SqlFragment);

function buildList(list: SelectList, scope: QueryScope): SqlFragment {
  return typeof list === 'function' ? list(scope) : selectList(scope.alias, list);
}

export function selectList(alias: string, fields: readonly Field[]): SqlFragment {
  const cols = [sql`${sql.id(alias, 'id')} AS "id"`];
  for (const f of fields) {
    if (f.name !== 'id' && f.column) cols.push(sql`${sql.id(alias, f.column)} AS ${sql.id(f.name)}`);
  }
  return sql.join(cols, sql`, `);
}

/** Stored fields needed to render `display_name` plus the given ones, without duplicates. */
export function withRecName(meta: ModelMeta, fields: Iterable<Field>): Field[] {
  const out = new Map<string, Field>();
  for (const f of fields) if (f.column) out.set(f.name, f);
  if (meta.recName) out.set(meta.recName, meta.fields.get(meta.recName)!);
  return [...out.values()];
}

export async function selectRows(meta: ModelMeta, state: QueryState, list: SelectList): Promise<Row[]> {
  const { columns, rest } = selectStatement(meta, state, list);
  return runSelect<Row>(columns, rest);
}

/** The SELECT of `selectRows`: its columns, and the rest from FROM on (in `scope`, or the root's). */
export function selectStatement(meta: ModelMeta, state: QueryState, list: SelectList, scope?: QueryScope): { columns: SqlFragment; rest: SqlFragment } {
  const plan = planSelect(meta, state, scope);
  const tail = orderAndPage(meta, state, plan.scope); // before from(): ordering and the list may add joins
  const columns = buildList(list, plan.scope);
  return { columns, rest: sql`FROM ${plan.scope.from()} WHERE ${plan.where} ${tail}` };
}

/**
 * Where the records of a to-many relation come from in a query over its target (`scope`): the FROM
 * (the target, or the join table joined to it) and the column naming each record's parent. Call it
 * once every join of `scope` is added (its FROM is built now).
 */
export function relationSource(
  field: OneToManyField | ManyToManyField, scope: QueryScope,
): { from: SqlFragment; parent: SqlFragment } {
  if (field instanceof OneToManyField) {
    return { from: scope.from(), parent: sql.id(scope.alias, field.inverse.column!) };
  }
  const rel = scope.newAlias();
  return {
    from: sql`${sql.table(field.join.table)} AS ${sql.id(rel)}
      JOIN ${scope.from()} ON ${sql.id(scope.alias, 'id')} = ${sql.id(rel, field.join.targetColumn)}`,
    parent: sql.id(rel, field.join.sourceColumn),
  };
}

/** Rows of a to-many relation's target linked to any of `parentIds`, each with `__parent`. */
export async function selectLinkedRows(
  field: OneToManyField | ManyToManyField,
  parentIds: readonly number[],
  state: QueryState,
  list: SelectList,
): Promise<Row[]> {
  const { scope, where } = planSelect(field.target, state);
  const tail = orderAndPage(field.target, state, scope);
  const columns = buildList(list, scope);
  const { from, parent } = relationSource(field, scope);
  return runSelect<Row>(sql`${parent} AS "__parent", ${columns}`,
    sql`FROM ${from} WHERE ${parent} = ANY(${parentIds}) AND ${where} ${tail}`);
}
