/**
 * Writes to-many fields. ManyToMany: the given ids replace the set (one DELETE and one INSERT per
 * field for all records). OneToMany: a list of line objects (created; with an `id`, updated) and
 * ids (kept or linked); on update, lines left out are deleted when they cannot exist without
 * their parent (required or CASCADE inverse) and unlinked otherwise.
 */
import { sql } from 'kysely';
import { ValidationError } from '../../errors.js';
import { missingReference } from '../../access/reference-checks.js';
import { isRecordId, type ManyToManyField, type OneToManyField } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';
import { runSql } from '../execute-sql.js';
import { QuerySet } from '../queryset.js';
import { inCondition } from '../query/filter-ast.js';
import { lineIdError, type WriteMode } from './write-values.js';
import { createRecords } from './create-records.js';
import { writeRecords } from './write-records.js';
import { deleteRecords } from './delete-records.js';
import { collectDependents, flushRecompute, newPending } from './recompute.js';

/** `perRecord[i]` holds the ManyToMany values of record `ids[i]`. */
export async function linkManyToMany(
  meta: ModelMeta,
  ids: readonly number[],
  perRecord: readonly (readonly [ManyToManyField, number[]][])[],
  mode: WriteMode,
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
      await collectDependents(meta, touched, [field.name], pending);
      await runSql(sql`DELETE FROM ${sql.table(j.table)} WHERE ${sql.id(j.sourceColumn)} = ANY(${touched})`);
    }
    if (pairs.length) {
      const targets = [...new Set(pairs.map((p) => p[1]))];
      const found = await new QuerySet(field.target).with_archived().filter(inCondition(['id'], targets)).ids();
      if (found.length !== targets.length) {
        // Read as the caller: a record it may not read is refused exactly as a missing one.
        throw missingReference(field, field.targetName, targets.filter((t) => !found.includes(t)));
      }
      await runSql(sql`INSERT INTO ${sql.table(j.table)} (${sql.id(j.sourceColumn)}, ${sql.id(j.targetColumn)})
        SELECT * FROM unnest(${pairs.map((p) => p[0])}::int[], ${pairs.map((p) => p[1])}::int[])`);
    }
    await collectDependents(meta, touched, [field.name], pending);
  }
  await flushRecompute(pending);
}

export async function writeOneToMany(field: OneToManyField, parentId: number, lines: readonly unknown[], mode: WriteMode): Promise<void> {
  const inverse = field.inverseName;
  const target = field.target;
  const linkIds: number[] = [];
  const updates: [number, Record<string, unknown>][] = [];
  const creates: Record<string, unknown>[] = [];
  for (const line of lines) {
    if (isRecordId(line)) {
      linkIds.push(line);
    } else if (line && typeof line === 'object' && !Array.isArray(line)) {
      const { id, ...rest } = line as Record<string, unknown>;
      if (id === undefined || id === null) creates.push({ ...rest, [inverse]: parentId });
      else if (isRecordId(id)) updates.push([id, rest]);
      else throw lineIdError(field, id);
    } else {
      throw lineIdError(field, line);
    }
  }
  if (mode === 'update') {
    const keep = new Set([...linkIds, ...updates.map(([id]) => id)]);
    const existing = await new QuerySet(target).with_archived().filter({ [inverse]: parentId }).ids();
    const dropped = existing.filter((id) => !keep.has(id));
    if (dropped.length) {
      if (field.inverse.isRequired || field.inverse.onDelete === 'CASCADE') await deleteRecords(target, dropped);
      else await writeRecords(target, dropped, { [inverse]: null });
    }
  }
  const parentLink = { parentLink: field.inverse };
  if (linkIds.length) await writeRecords(target, linkIds, { [inverse]: parentId }, parentLink);
  for (const [id, vals] of updates) await writeRecords(target, [id], { ...vals, [inverse]: parentId }, parentLink);
  if (creates.length) await createRecords(target, creates, { parentLink: field.inverse });
}
