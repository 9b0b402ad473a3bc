/**
 * A Monetary amount is stored rounded to its currency (ARCHITECTURE §9: read back as a number
 * rounded to its currency), like Odoo's monetary fields: the value written becomes, in the same
 * statement, `round(value / rounding) * rounding` of the currency named by the field's
 * `currency_field` — the one written with it, or the record's own on an update. NUMERIC
 * arithmetic, half away from zero; no currency (or no rounding) leaves the amount as written.
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import type { Field } from '../fields/field.js';
import { ManyToOneField } from '../fields/relational-fields.js';
import type { Model } from '../model.js';
import type { ModelMeta } from '../model-meta.js';
import { runSql } from '../execute-sql.js';
import { roundToStep } from '../round-to-step.js';

/** The currency ManyToOne of a Monetary field, when its target carries a `rounding`. */
export function currencyOf(meta: ModelMeta, field: Field): ManyToOneField | null {
  const name = (field.options as { currency_field?: string }).currency_field;
  if (field.type !== 'Monetary' || !name) return null;
  const link = meta.fields.get(name);
  return link instanceof ManyToOneField && link.target.fields.get('rounding')?.column ? link : null;
}

/**
 * The SQL value to write for `field` in a row whose other written values are `row`: the value
 * itself, or for a Monetary field the value rounded to the currency (`onUpdate`: the row's own
 * currency column when the write does not set it).
 */
export function columnValue(meta: ModelMeta, field: Field, value: unknown, row: ReadonlyMap<Field, unknown>, onUpdate: boolean): unknown {
  const link = value === null || value === undefined ? null : currencyOf(meta, field);
  if (!link) return value;
  const currency: SqlFragment | null = row.has(link) ? sql`${row.get(link)}::int` : onUpdate ? sql.id(link.column!) : null;
  if (!currency) return value;
  return roundedExpression(link, value, currency);
}

/**
 * `value` (a parameter, or a column of the rows a statement writes) rounded to the currency whose
 * id `currency` gives, in SQL; unchanged without a currency or rounding.
 */
export function roundedExpression(link: ManyToOneField, value: unknown, currency: SqlFragment): SqlFragment {
  return sql`COALESCE((SELECT round(${value}::numeric / c.rounding::numeric) * c.rounding::numeric
    FROM ${sql.table(link.target.table)} c WHERE c.id = ${currency} AND c.rounding > 0), ${value}::numeric)`;
}

/**
 * Computed Monetary `values` of `records`, rounded to each record's currency the way a write
 * stores them (one query for all the currencies), so a recompute compares and stores what a
 * write of the same amount would: a subtotal of 0.1 + 0.2 is 0.3 both ways.
 */
export async function roundedToCurrency(meta: ModelMeta, field: Field, records: readonly Model[], values: unknown[]): Promise<unknown[]> {
  const link = currencyOf(meta, field);
  if (!link) return values;
  const currencyIds = [...new Set(records.map((r) => r._values[link.name]).filter((id): id is number => typeof id === 'number'))];
  if (!currencyIds.length) return values;
  const rows = await runSql<{ id: number; rounding: number | string | null }>(
    sql`SELECT id, rounding FROM ${sql.table(link.target.table)} WHERE id = ANY(${currencyIds}::int[])`,
  );
  const roundings = new Map(rows.map((r) => [r.id, r.rounding === null ? null : Number(r.rounding)]));
  return values.map((value, i) => {
    const currency = records[i]!._values[link.name];
    const amount = typeof value === 'string' && value !== '' ? Number(value) : value;
    if (typeof amount !== 'number' || !Number.isFinite(amount) || typeof currency !== 'number') return value;
    const step = roundings.get(currency);
    return step && step > 0 ? roundToStep(amount, step) : value;
  });
}
