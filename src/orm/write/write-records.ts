/**
 * Writes records: the same values to many (a record's `write`, a queryset's `update`, the API's
 * update, a bulk update by selection) or each record its own (a bulk update's items, the field
 * assignments of model code, OneToMany lines moved to their parents). Either way the cost does not
 * grow with the records: one UPDATE for the columns (`update-rows.ts` when the values differ),
 * ManyToMany links in one DELETE and one INSERT per field, OneToMany lines set-based
 * (`write-relations.ts`), setters, then recomputation of the stored computed fields that depend on
 * what changed — including the records a changed link left.
 *
 * `Model._check_change` sees `{op: 'write', ids, vals}` with one set of values: a write of
 * different values calls it once per distinct set of values, with the records taking it.
 */
import { sql } from '../../db/sql-fragment.js';
import { NotFound, ValidationError } from '../../errors.js';
import { currentEnv } from '../env.js';
import type { Field } from '../fields/field.js';
import type { ModelMeta } from '../model-meta.js';
import { runGuarded } from '../execute-sql.js';
import { RecordBatch } from '../record-batch.js';
import { checkRequired, sortValues, type SortedValues } from './write-values.js';
import { linkManyToMany, writeLines, type LineWrite } from './write-relations.js';
import { changesLinks, collectDependents, flushRecompute, newPending, type Protected } from './recompute.js';
import { activePolicy } from '../access-policy.js';
import { assertCompanyConsistency, touchesCompanyLinks } from './company-consistency.js';
import { columnValue } from './monetary-rounding.js';
import { prepareFileWrite } from './file-values.js';
import { atItem, atItemAsync, labelItem, soleItem, type ItemIndexes } from './item-errors.js';
import { assertDistinctKeys, attributeFailure } from './item-keys.js';
import { setFromRows } from './update-rows.js';
import { LOCKED, lockedIds, ownerLock, updateStrength } from './row-locks.js';
import { trackChanges } from './changed-fields.js';
import type { OneToManyField } from '../fields/relational-fields.js';
import { assertUnlockedWrites, hasStateLocks } from '../state-locks.js';
import { checkUnmatchedWrite } from './unmatched-write.js';

export interface WriteOptions {
  /** The link to the parent a OneToMany write sets on its lines (set by the write path, not the caller). */
  readonly parentLink?: Field;
  /** Per record written, the bulk item it comes from (`item-errors.ts`). */
  readonly items?: ItemIndexes;
}

/** One record of a write and the values it takes. */
export interface RecordValues {
  readonly id: number;
  readonly vals: Record<string, unknown>;
}

/** Writes the same values to records `ids`. */
export async function writeRecords(
  meta: ModelMeta, ids: readonly number[], vals: Record<string, unknown>, options: WriteOptions = {},
): Promise<void> {
  // No record: the values are checked all the same (bad input is refused whatever matches).
  if (!ids.length) return checkUnmatchedWrite(meta, vals, options.parentLink);
  await writeEach(meta, ids.map((id) => ({ id, vals })), options);
}

/**
 * Writes each record its own values. Entries sharing one `vals` object are one write of the same
 * values; a record may appear once only when the values differ (which would win is undefined).
 */
export async function writeEach(meta: ModelMeta, entries: readonly RecordValues[], options: WriteOptions = {}): Promise<void> {
  if (!entries.length) return;
  const uniform = entries.every((e) => e.vals === entries[0]!.vals);
  const items = options.items;
  // The same values on a repeated id is one record (as `id = ANY(…)` reads it).
  if (uniform) entries = uniqueEntries(entries);
  else assertOnce(meta, entries, items);
  const ids = entries.map((e) => e.id);
  const plan = await prepare(meta, entries, uniform, items);
  try {
    await apply(meta, ids, plan, uniform, options);
  } catch (err) {
    throw attributeFailure(err, meta, ids, plan.sorted.map((s) => s.columns), items);
  }
}

function uniqueEntries(entries: readonly RecordValues[]): RecordValues[] {
  const seen = new Set<number>();
  return entries.filter((e) => !seen.has(e.id) && seen.add(e.id));
}

function assertOnce(meta: ModelMeta, entries: readonly RecordValues[], items: ItemIndexes | undefined): void {
  const first = new Map<number, number>();
  entries.forEach((e, i) => {
    const earlier = first.get(e.id);
    if (earlier === undefined) first.set(e.id, i);
    else {
      const by = items ? `item ${items[earlier]}` : 'another entry';
      throw labelItem(new ValidationError(`${meta.name} ${e.id} is written twice in one call (also by ${by})`), items?.[i]);
    }
  });
}

interface WritePlan {
  /** Per entry, the values as given (what `_check_change` sees). */
  readonly given: readonly Record<string, unknown>[];
  /** Per entry, its sorted values (one shared object for a write of the same values). */
  readonly sorted: readonly SortedValues[];
  /** Per entry, the file-field work to finish after the UPDATE (null when it writes no file field). */
  readonly files: readonly ({ uploaded: ReadonlySet<number>; finish(): Promise<void> } | null)[];
}

/** Converts and validates the values of every entry, naming its item on refusal. */
async function prepare(meta: ModelMeta, entries: readonly RecordValues[], uniform: boolean, items: ItemIndexes | undefined): Promise<WritePlan> {
  const given = entries.map((e) => e.vals);
  if (uniform) {
    const item = soleItem(items);
    // File fields: uploads become attachments, and replaced ones are deleted after the UPDATE.
    const files = await atItemAsync(item, () => prepareFileWrite(meta, entries.map((e) => e.id), given[0]!));
    const sorted = atItem(item, () => sortChecked(meta, files ? files.vals : given[0]!));
    return { given, sorted: entries.map(() => sorted), files: entries.map(() => files) };
  }
  const sorted: SortedValues[] = [];
  const files: WritePlan['files'][number][] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const file = await atItemAsync(items?.[i], () => prepareFileWrite(meta, [e.id], e.vals));
    files.push(file);
    sorted.push(atItem(items?.[i], () => sortChecked(meta, file ? file.vals : e.vals)));
  }
  if (items) assertDistinctKeys(meta, sorted.map((s) => s.columns), items);
  return { given, sorted, files };
}

function sortChecked(meta: ModelMeta, vals: Record<string, unknown>): SortedValues {
  const sorted = sortValues(meta, vals, 'update');
  checkRequired(meta, sorted.columns, 'update');
  activePolicy()?.assertCompanyValues(meta, sorted);
  return sorted;
}

async function apply(meta: ModelMeta, ids: readonly number[], plan: WritePlan, uniform: boolean, options: WriteOptions): Promise<void> {
  const env = currentEnv();
  const { sorted, files } = plan;
  const items = options.items;
  const policy = activePolicy();
  await policy?.assertRecordsAllowed(meta, 'write', ids);
  await checkChange(meta, ids, plan.given, items);
  const columnsWritten = uniform ? [sorted[0]!.columns] : sorted.map((s) => s.columns);
  const changed = [...new Set(columnsWritten.flatMap((columns) => [...columns.keys()].map((f) => f.name)))];
  // Rows are locked in id order, the owners whose totals this write recomputes first (`row-locks.ts`).
  const owners = ownerLock(meta, ids, changed, columnsWritten, options.parentLink);
  // Fields a record's state locks (state-locks.ts); the check locks the rows in the same order.
  if (hasStateLocks(meta)) await atItemAsync(soleItem(items), () => assertUnlockedWrites(meta, ids, plan.given, Boolean(options.parentLink), owners));
  // Links to records the caller may not read are refused by the UPDATE's own RETURNING (no statement of its own).
  const uploaded = new Set(files.flatMap((f) => (f ? [...f.uploaded] : [])));
  const links = policy?.statementChecks(meta, 'write', columnsWritten, { except: options.parentLink, uploaded })?.links ?? null;
  const pending = newPending();
  // A changed link may leave dependents behind (a line moved to another order): collect them first.
  if (changesLinks(meta, changed)) await collectDependents(meta, ids, changed, pending);

  const updatedDate = new Date().toISOString();
  const audit = new Map<Field, unknown>([
    [meta.fields.get('updated_date')!, updatedDate],
    [meta.fields.get('updated_by')!, env.uid],
  ]);
  // Record-changed pings: null (and no work at all) unless the database is watched.
  const track = await trackChanges(meta, ids, sorted, updatedDate);
  let updateSql;
  if (uniform) {
    const columns = new Map([...sorted[0]!.columns, ...audit]);
    const sets = [...columns].map(([f, v]) => sql`${sql.id(f.column!)} = ${columnValue(meta, f, v, columns, true)}`);
    // One row has one lock to take: it keeps the plain statement.
    updateSql = ids.length > 1
      ? sql`SET ${sql.join(sets)} FROM ${lockedIds(meta, ids, updateStrength(meta, columns.keys()), owners?.gate)} WHERE ${sql.id(meta.table, 'id')} = ${sql.ref(`${LOCKED}.id`)}`
      : sql`SET ${sql.join(sets)} WHERE id = ANY(${[...ids]})${owners ? sql` AND ${owners.gate}` : sql``}`;
  } else {
    updateSql = setFromRows(meta, ids, sorted.map((s) => s.columns), audit, owners?.gate);
  }
  const updated = await runGuarded<{ id: number }>((guard) => sql`${owners?.with ?? sql``}UPDATE ${sql.table(meta.table)} ${updateSql}
    RETURNING ${sql.id(meta.table, 'id')}${guard ? sql`, ${guard}` : sql``}${links?.returning ?? sql``}${track?.returning ?? sql``}`);
  if (updated.length !== ids.length) {
    const found = new Set(updated.map((r) => r.id));
    throw new NotFound(`${meta.name} ${ids.filter((id) => !found.has(id)).slice(0, 5).join(', ')} does not exist`);
  }
  if (links) {
    if (uniform) atItem(soleItem(items), () => links.verify(updated, [sorted[0]!.columns]));
    else {
      // The rows come back in no particular order: each is checked against its own entry's values.
      const index = new Map(ids.map((id, i) => [id, i]));
      for (const row of updated) {
        const i = index.get(row.id)!;
        atItem(items?.[i], () => links.verify([row], [sorted[i]!.columns]));
      }
    }
  }

  track?.finish(updated);
  for (const file of new Set(files)) if (file) await file.finish();
  if (sorted.some((s) => s.manyToMany.length)) await linkManyToMany(meta, ids, sorted.map((s) => s.manyToMany), 'update', items);
  for (const [field, writes] of lineWrites(ids, sorted, items)) await writeLines(field, writes, 'update');
  await runSetters(meta, ids, sorted, items);
  await collectDependents(meta, ids, changed, pending);
  // Values written to editable computed fields stay as written, whatever else this write changed.
  await flushRecompute(pending, protectedWrites(ids, sorted));
  const written = [...changed, ...new Set(sorted.flatMap((s) => s.manyToMany.map(([f]) => f.name)))];
  if (touchesCompanyLinks(meta, written)) await assertCompanyConsistency(meta, ids);
  await afterChange(meta, ids, plan.given, items);
}

/** `_check_change` once per distinct set of values given, with the records taking it. */
async function checkChange(meta: ModelMeta, ids: readonly number[], given: readonly Record<string, unknown>[], items: ItemIndexes | undefined): Promise<void> {
  const check = meta.cls._check_change;
  if (!check) return;
  await byDistinctValues(ids, given, items, (change) => check.call(meta.cls, change));
}

/** `_after_change` once per distinct set of values given, once they are written. */
async function afterChange(meta: ModelMeta, ids: readonly number[], given: readonly Record<string, unknown>[], items: ItemIndexes | undefined): Promise<void> {
  const after = meta.cls._after_change;
  if (!after) return;
  await byDistinctValues(ids, given, items, (change) => after.call(meta.cls, change));
}

async function byDistinctValues(
  ids: readonly number[], given: readonly Record<string, unknown>[], items: ItemIndexes | undefined,
  run: (change: { op: 'write'; ids: number[]; vals: Record<string, unknown> }) => void | Promise<void>,
): Promise<void> {
  const groups = new Map<string, { vals: Record<string, unknown>; at: number[] }>();
  const keys = new Map<Record<string, unknown>, string>();
  given.forEach((vals, i) => {
    let key = keys.get(vals);
    if (key === undefined) keys.set(vals, (key = stableJson(vals)));
    const group = groups.get(key) ?? groups.set(key, { vals, at: [] }).get(key)!;
    group.at.push(i);
  });
  for (const { vals, at } of groups.values()) {
    await atItemAsync(soleItem(items && at.map((i) => items[i]!)), () => run({ op: 'write', ids: at.map((i) => ids[i]!), vals }));
  }
}

/** The OneToMany line writes of every record, by field. */
function lineWrites(ids: readonly number[], sorted: readonly SortedValues[], items: ItemIndexes | undefined): Map<OneToManyField, LineWrite[]> {
  const byField = new Map<OneToManyField, LineWrite[]>();
  sorted.forEach((s, i) => {
    for (const [field, lines] of s.oneToMany) {
      const writes = byField.get(field) ?? byField.set(field, []).get(field)!;
      writes.push({ parentId: ids[i]!, lines, item: items?.[i] });
    }
  });
  return byField;
}

/** Setters of computed fields, on the records loaded once. */
async function runSetters(meta: ModelMeta, ids: readonly number[], sorted: readonly SortedValues[], items: ItemIndexes | undefined): Promise<void> {
  const withSetters = ids.filter((_, i) => sorted[i]!.setters.length);
  if (!withSetters.length) return;
  const index = new Map(ids.map((id, i) => [id, i]));
  for (const rec of await RecordBatch.load(meta, withSetters)) {
    const i = index.get(rec.id)!;
    for (const [field, value] of sorted[i]!.setters) {
      await atItemAsync(items?.[i], () => (rec as any)[field.options.setter!](value));
    }
  }
}

/** The records whose editable computed fields this write sets, by field. */
function protectedWrites(ids: readonly number[], sorted: readonly SortedValues[]): Protected {
  const out: Protected = new Map();
  sorted.forEach((s, i) => {
    for (const f of s.columns.keys()) {
      if (!f.isEditableComputed) continue;
      const set = out.get(f) ?? out.set(f, new Set()).get(f)!;
      set.add(ids[i]!);
    }
  });
  return out;
}

/** JSON with object keys sorted: equal values give equal text whatever the order of their keys. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}
