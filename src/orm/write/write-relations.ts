/**
 * Writes to-many fields, for all the records of a write at once. ManyToMany: the given ids replace
 * the set (one DELETE and one INSERT per field for all records). OneToMany: a list of line objects
 * (created; with an `id`, updated) and ids (kept or linked); on update, lines left out are deleted
 * when they cannot exist without their parent (required or CASCADE inverse) and unlinked
 * otherwise. The lines of every parent are written together — one create of all new lines, one
 * write of all changed ones — so a bulk call with lines costs what one record with lines costs.
 */
import { sql } from '../../db/sql-fragment.js';
import { missingReference } from '../missing-reference.js';
import { isRecordId, type ManyToManyField, type OneToManyField } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';
import { runSql } from '../execute-sql.js';
import { currentEnv } from '../env.js';
import { matchingIds } from '../query/matching-ids.js';
import { inCondition } from '../query/filter-ast.js';
import { lineIdError, type WriteMode } from './write-values.js';
import type { RecordValues } from './write-records.js';
import { collectDependents, flushRecompute, newPending } from './recompute.js';
import { labelItem, type ItemIndexes } from './item-errors.js';

/** `perRecord[i]` holds the ManyToMany values of record `ids[i]` (from bulk item `items[i]`). */
export async function linkManyToMany(
  meta: ModelMeta,
  ids: readonly number[],
  perRecord: readonly (readonly [ManyToManyField, number[]][])[],
  mode: WriteMode,
  items?: ItemIndexes,
): Promise<void> {
  const byField = new Map<ManyToManyField, [number, number][]>();
  perRecord.forEach((list, i) => {
    for (const [field, targets] of list) {
      const pairs = byField.get(field) ?? [];
      for (const t of targets) pairs.push([ids[i]!, t]);
      byField.set(field, pairs);
    }
  });
  if (!byField.size) return;
  const pending = newPending();
  for (const [field, pairs] of byField) {
    const j = field.join;
    const touched = [...new Set(perRecord.flatMap((list, i) => (list.some(([f]) => f === field) ? [ids[i]!] : [])))];
    if (mode === 'update') {
      // The link rows of a record are rewritten only by writes of that record, and every write
      // has locked its records (in id order, `row-locks.ts`) by its UPDATE before it gets here:
      // two rewrites of the same links wait for each other there, never in the middle of these.
      await collectDependents(meta, touched, [field.name], pending);
      await runSql(sql`DELETE FROM ${sql.table(j.table)} WHERE ${sql.id(j.sourceColumn)} = ANY(${touched})`);
    }
    if (pairs.length) {
      const targets = [...new Set(pairs.map((p) => p[1]))];
      const found = new Set(await matchingIds(field.target, inCondition(['id'], targets)));
      const missing = targets.filter((t) => !found.has(t));
      if (missing.length) {
        // Read as the caller: a record it may not read is refused exactly as a missing one.
        const first = perRecord.findIndex((list) => list.some(([f, t]) => f === field && t.some((id) => !found.has(id))));
        const own = perRecord[first]!.find(([f]) => f === field)![1].filter((id) => !found.has(id));
        throw labelItem(missingReference(field, field.targetName, items ? own : missing), items?.[first]);
      }
      await runSql(sql`INSERT INTO ${sql.table(j.table)} (${sql.id(j.sourceColumn)}, ${sql.id(j.targetColumn)})
        SELECT * FROM unnest(${pairs.map((p) => p[0])}::int[], ${pairs.map((p) => p[1])}::int[])`);
    }
    await collectDependents(meta, touched, [field.name], pending);
  }
  await flushRecompute(pending);
}

/** The lines one parent's write gives a OneToMany field. */
export interface LineWrite {
  readonly parentId: number;
  readonly lines: readonly unknown[];
  /** The bulk item the parent comes from: its lines' errors name it. */
  readonly item?: number;
}

/** Writes the lines of `field` for every parent of `writes` (see the file comment). */
export async function writeLines(field: OneToManyField, writes: readonly LineWrite[], mode: WriteMode): Promise<void> {
  if (!writes.length) return;
  const inverse = field.inverseName;
  const target = field.target;
  const links: RecordValues[] = [];
  const linkItems: number[] = [];
  const updates: RecordValues[] = [];
  const updateItems: number[] = [];
  const creates: Record<string, unknown>[] = [];
  const createItems: number[] = [];
  const parentVals = new Map<number, Record<string, unknown>>();
  for (const { parentId, lines, item } of writes) {
    // One values object per parent: linking lines to one parent is one write of the same values.
    const toParent = parentVals.get(parentId) ?? parentVals.set(parentId, { [inverse]: parentId }).get(parentId)!;
    for (const line of lines) {
      if (isRecordId(line)) {
        links.push({ id: line, vals: toParent });
        linkItems.push(item!);
      } else if (line && typeof line === 'object' && !Array.isArray(line)) {
        const { id, ...rest } = line as Record<string, unknown>;
        if (id === undefined || id === null) {
          creates.push({ ...rest, [inverse]: parentId });
          createItems.push(item!);
        } else if (isRecordId(id)) {
          updates.push({ id, vals: { ...rest, [inverse]: parentId } });
          updateItems.push(item!);
        } else {
          throw labelItem(lineIdError(field, id), item);
        }
      } else {
        throw labelItem(lineIdError(field, line), item);
      }
    }
  }
  const { createRecords, deleteRecords, writeEach, writeRecords } = currentEnv().work.writes;
  // Item indexes only when every parent has one (a bulk call): otherwise there is nothing to name.
  const named = writes.every((w) => w.item !== undefined);
  if (mode === 'update') {
    const keep = new Set([...links.map((l) => l.id), ...updates.map((u) => u.id)]);
    const parents = [...new Set(writes.map((w) => w.parentId))];
    const existing = await matchingIds(target, inCondition([inverse], parents));
    const dropped = existing.filter((id) => !keep.has(id));
    if (dropped.length) {
      if (field.inverse.isRequired || field.inverse.onDelete === 'CASCADE') await deleteRecords(target, dropped);
      else await writeRecords(target, dropped, { [inverse]: null });
    }
  }
  const parentLink = field.inverse;
  if (links.length) await writeEach(target, links, { parentLink, items: named ? linkItems : undefined });
  if (updates.length) await writeEach(target, updates, { parentLink, items: named ? updateItems : undefined });
  if (creates.length) await createRecords(target, creates, { parentLink, items: named ? createItems : undefined });
}
