/**
 * Naming the item behind a key violation of a multi-record write, without a statement per item
 * (CONTRACTS C1: "the `item <index>: ` prefix names the failing item for validation errors and
 * for unique violations alike, the check stays set-based").
 *
 * - Two items of one call with the same values for a unique key are refused before the statement,
 *   in memory, naming both (`assertDistinctKeys`).
 * - What the database still refuses — a key another record already holds, a link to a record that
 *   does not exist, a missing required value — names its key values in the error's detail
 *   (`Key (name, project_id)=(Design, 3) already exists.`): they are matched against the rows the
 *   statement wrote (`violatingRow`). With no duplicates inside the call, one row matches.
 */
import { ValidationError } from '../../errors.js';
import type { Field } from '../fields/field.js';
import type { ModelMeta } from '../model-meta.js';
import { failedRecord, itemOf, labelItem, soleItem, type ItemIndexes } from './item-errors.js';

/** The column values one record of a write gives, by field. */
export type RowValues = ReadonlyMap<Field, unknown>;

interface UniqueKey {
  readonly fields: readonly Field[];
  /** `_unique_when`: the Boolean that must be true for the key to apply. */
  readonly when: Field | null;
  readonly message?: string;
}

function uniqueKeys(meta: ModelMeta): UniqueKey[] {
  const field = (name: string) => meta.fields.get(name)!;
  return [
    ...meta.uniqueTogether.map((tuple) => ({ fields: tuple.map(field), when: null })),
    ...meta.uniqueWhen.map((entry) => ({ fields: entry.fields.map(field), when: field(entry.when), message: entry.message })),
    { fields: [field('identifier')], when: null },
  ].filter((key) => key.fields.every((f) => f?.column));
}

/**
 * Refuses the second of two rows of one write that give the same values to a unique key (rows
 * that leave a key column unwritten, or hold NULL in it, are not compared: NULLs are distinct and
 * an unwritten value is the record's own).
 */
export function assertDistinctKeys(meta: ModelMeta, rows: readonly RowValues[], items: ItemIndexes): void {
  if (rows.length < 2) return;
  for (const key of uniqueKeys(meta)) {
    const seen = new Map<string, number>();
    rows.forEach((row, i) => {
      if (key.when && row.get(key.when) !== true) return;
      const values = key.fields.map((f) => row.get(f));
      if (values.some((v) => v === null || v === undefined)) return;
      const text = JSON.stringify(values.map((v) => String(v)));
      const first = seen.get(text);
      if (first === undefined) {
        seen.set(text, i);
        return;
      }
      const about = key.fields.length === 1 ? { field: key.fields[0]!.name, model: meta.name } : {};
      throw labelItem(new ValidationError(duplicateMessage(meta, key, items[first]!), about), items[i]);
    });
  }
}

function duplicateMessage(meta: ModelMeta, key: UniqueKey, first: number): string {
  if (key.message) return `${key.message} (item ${first} has the same values)`;
  const names = key.fields.map((f) => `'${f.name}'`).join(', ');
  return key.fields.length > 1
    ? `${meta.verboseName}: the combination of ${names} must be unique; item ${first} has the same values`
    : `${meta.verboseName}: ${names} must be unique; item ${first} has the same value`;
}

/**
 * `err`, labelled with the item it is about when that can be told: the record a compute failed on
 * (`ids[i]`), the row a key violation names, or the one item every row comes from.
 */
export function attributeFailure(
  err: unknown, meta: ModelMeta, ids: readonly number[], rows: readonly RowValues[], items: ItemIndexes | undefined,
): unknown {
  if (!items?.length || itemOf(err) !== undefined) return err;
  const failed = failedRecord(err);
  const index = failed && failed.meta === meta ? ids.indexOf(failed.id) : -1;
  if (index >= 0) return labelItem(err, items[index]);
  const row = violatingRow(err, meta, rows);
  if (row !== undefined) return labelItem(err, items[row]);
  return labelItem(err, soleItem(items));
}

/** The parts of a PostgreSQL error report this file reads. */
interface Report {
  code?: unknown;
  detail?: unknown;
  table?: unknown;
  column?: unknown;
}

const KEY_DETAIL = /^Key \((.*)\)=\((.*)\) (?:already exists|is not present in table)/s;

/**
 * The index of the row of `rows` (written to `meta`'s table by one statement) that a database
 * violation is about, read from the detail of the error that caused `err`; undefined when the
 * error is no such violation or no row matches.
 */
export function violatingRow(err: unknown, meta: ModelMeta, rows: readonly RowValues[]): number | undefined {
  const report = (err as { cause?: Report } | null)?.cause;
  if (!report || report.table !== meta.table) return undefined;
  const byColumn = new Map([...meta.fields.values()].filter((f) => f.column).map((f) => [f.column!, f]));
  if (report.code === '23502' && typeof report.column === 'string') {
    const field = byColumn.get(report.column);
    const i = field ? rows.findIndex((row) => row.get(field) === null || row.get(field) === undefined) : -1;
    return i >= 0 ? i : undefined;
  }
  if ((report.code !== '23505' && report.code !== '23503') || typeof report.detail !== 'string') return undefined;
  const match = KEY_DETAIL.exec(report.detail);
  if (!match) return undefined;
  const fields = match[1]!.split(', ').map((c) => byColumn.get(c.replace(/^"(.*)"$/, '$1')));
  if (fields.some((f) => !f)) return undefined;
  const values = match[2]!;
  const i = rows.findIndex((row) => {
    // A column the row does not write holds the record's own value: any text matches it.
    const parts = fields.map((f) => (row.has(f!) ? keyText(row.get(f!)) : null));
    if (parts.every((p) => p === null) || parts.includes(undefined)) return false;
    const pattern = parts.map((p) => (p === null ? '.*?' : escapeRegExp(p as string))).join(', ');
    return new RegExp(`^${pattern}$`, 's').test(values);
  });
  return i >= 0 ? i : undefined;
}

/** A column value as PostgreSQL prints it in a key detail; undefined when it cannot be told. */
function keyText(value: unknown): string | undefined {
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number' || typeof value === 'string') return String(value);
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
