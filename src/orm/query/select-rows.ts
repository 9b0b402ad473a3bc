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
import { orderAndPage, planSelect, type QueryState } from './select-plan.js';

export type Row = Record<string, unknown>;

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

export async function selectRows(meta: ModelMeta, state: QueryState, fields: readonly Field[]): Promise<Row[]> {
  const { scope, where } = planSelect(meta, state);
  const tail = orderAndPage(meta, state, scope); // before from(): ordering may add joins
  return runSql<Row>(sql`SELECT ${selectList(scope.alias, fields)} FROM ${scope.from()} WHERE ${where} ${tail}`);
}

/** Rows of `meta` linked through a join table to any of `parentIds`, each with `__parent`. */
export async function selectLinkedRows(
  meta: ModelMeta,
  join: JoinTable,
  parentIds: readonly number[],
  state: QueryState,
  fields: readonly Field[],
): Promise<Row[]> {
  const { scope, where } = planSelect(meta, state);
  const tail = orderAndPage(meta, state, scope);
  const rel = scope.newAlias();
  return runSql<Row>(sql`SELECT ${sql.id(rel, join.sourceColumn)} AS "__parent", ${selectList(scope.alias, fields)}
    FROM ${sql.table(join.table)} AS ${sql.id(rel)} JOIN ${scope.from()} ON ${sql.id(scope.alias, 'id')} = ${sql.id(rel, join.targetColumn)}
    WHERE ${sql.id(rel, join.sourceColumn)} = ANY(${parentIds}) AND ${where} ${tail}`);
}
