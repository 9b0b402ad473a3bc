/**
 * The UPDATE of a write that gives each record its own values (a bulk update's items, the field
 * assignments of model code, OneToMany lines moved to their parents): one statement for all the
 * records,
 *
 *   UPDATE task SET name = v.c0, priority = CASE WHEN v.w1 THEN v.c1 ELSE task.priority END, …
 *   FROM unnest($ids::int[], $c0::varchar(255)[], $c1::varchar(255)[], $w1::boolean[]) AS v(id, c0, c1, w1)
 *   WHERE task.id = v.id
 *
 * Each column's values travel as one array parameter, so neither the statement's text nor its
 * number of parameters grows with the records (PostgreSQL's 65,535-parameter limit never bites,
 * and the prepared statement is reused). A column only some records write carries a mask: the
 * others keep their value. Monetary amounts are rounded per row to the currency the row writes,
 * or else holds (as `columnValue` does for a write of one set of values). The rows are locked in
 * id order before they are written (`row-locks.ts`), whatever order the records come in.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import type { Field } from '../fields/field.js';
import type { ModelMeta } from '../model-meta.js';
import type { RowValues } from './item-keys.js';
import { currencyOf, roundedExpression } from './monetary-rounding.js';
import { lockedRows, updateStrength } from './row-locks.js';

/**
 * `SET … FROM unnest(…) AS v(…) WHERE <table>.id = v.id` for records `ids`, record `ids[i]` taking
 * `rows[i]`, and every record taking `common` (the audit columns); `gate` is an `OwnerLock`'s.
 */
export function setFromRows(meta: ModelMeta, ids: readonly number[], rows: readonly RowValues[], common: RowValues, gate?: SqlFragment): SqlFragment {
  const columns = [...new Set(rows.flatMap((row) => [...row.keys()]))].filter((f) => !common.has(f));
  const arrays: SqlFragment[] = [sql`${[...ids]}::int[]`];
  const names = ['id'];
  const refs = new Map<Field, { value: SqlFragment; mask: SqlFragment | null }>();
  columns.forEach((f, i) => {
    // The type comes from the field declaration, never from input.
    arrays.push(sql`${rows.map((row) => (row.has(f) ? row.get(f) ?? null : null))}::${sql.raw(`${f.sqlType()}[]`)}`);
    names.push(`c${i}`);
    let mask: SqlFragment | null = null;
    if (!rows.every((row) => row.has(f))) {
      arrays.push(sql`${rows.map((row) => row.has(f))}::boolean[]`);
      names.push(`w${i}`);
      mask = sql.ref(`v.w${i}`);
    }
    refs.set(f, { value: sql.ref(`v.c${i}`), mask });
  });
  const current = (f: Field) => sql.id(meta.table, f.column!);
  const keepUnwritten = (f: Field, expr: SqlFragment) => {
    const mask = refs.get(f)!.mask;
    return mask ? sql`CASE WHEN ${mask} THEN ${expr} ELSE ${current(f)} END` : expr;
  };
  const sets = columns.map((f) => {
    const link = currencyOf(meta, f);
    const value = refs.get(f)!.value;
    const currency = link && (refs.has(link) ? keepUnwritten(link, refs.get(link)!.value) : current(link));
    const expr = link && currency ? roundedExpression(link, value, currency) : value;
    return sql`${sql.id(f.column!)} = ${keepUnwritten(f, expr)}`;
  });
  for (const [f, v] of common) sets.push(sql`${sql.id(f.column!)} = ${v}`);
  const rowsSql = sql`unnest(${sql.join(arrays)}) AS v(${sql.join(names.map((n) => sql.id(n)))})`;
  if (ids.length === 1) return sql`SET ${sql.join(sets)} FROM ${rowsSql} WHERE ${sql.id(meta.table, 'id')} = v.id${gate ? sql` AND ${gate}` : sql``}`;
  return sql`SET ${sql.join(sets)} FROM ${lockedRows(meta, rowsSql, 'v', updateStrength(meta, [...columns, ...common.keys()]), gate)}
    WHERE ${sql.id(meta.table, 'id')} = v.id`;
}
