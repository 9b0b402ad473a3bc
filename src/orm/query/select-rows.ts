/**
 * Executes a select plan: the rows of a model that a query state selects, with the requested
 * stored fields as columns named after the fields (a ManyToOne column comes back as the id under
 * the field's name). Optionally rows are fetched through a ManyToMany join table, carrying the
 * linking parent id as `__parent`.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Field } from '../fields/field.js';
import type { JoinTable } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';
import { runSql } from '../execute-sql.js';
import type { QueryScope } from './query-scope.js';
import { orderAndPage, planSelect, type QueryState } from './select-plan.js';

export type Row = Record<string, unknown>;

/** What a SELECT returns: stored fields as plain columns, or a builder given the query's scope (joins). */
export type SelectList = readonly Field[] | ((scope: QueryScope) => RawBuilder<unknown>);

function buildList(list: SelectList, scope: QueryScope): RawBuilder<unknown> {
  return typeof list === 'function' ? list(scope) : selectList(scope.alias, list);
}

export function selectList(alias: string, fields: readonly Field[]): RawBuilder<unknown> {
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
  const { scope, where } = planSelect(meta, state);
  const tail = orderAndPage(meta, state, scope); // before from(): ordering and the list may add joins
  const columns = buildList(list, scope);
  return runSql<Row>(sql`SELECT ${columns} FROM ${scope.from()} WHERE ${where} ${tail}`);
}

/** Rows of `meta` linked through a join table to any of `parentIds`, each with `__parent`. */
export async function selectLinkedRows(
  meta: ModelMeta,
  join: JoinTable,
  parentIds: readonly number[],
  state: QueryState,
  list: SelectList,
): Promise<Row[]> {
  const { scope, where } = planSelect(meta, state);
  const tail = orderAndPage(meta, state, scope);
  const rel = scope.newAlias();
  const columns = buildList(list, scope);
  return runSql<Row>(sql`SELECT ${sql.id(rel, join.sourceColumn)} AS "__parent", ${columns}
    FROM ${sql.table(join.table)} AS ${sql.id(rel)} JOIN ${scope.from()} ON ${sql.id(scope.alias, 'id')} = ${sql.id(rel, join.targetColumn)}
    WHERE ${sql.id(rel, join.sourceColumn)} = ANY(${parentIds}) AND ${where} ${tail}`);
}
