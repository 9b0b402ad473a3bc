/**
 * Clone (CONTRACTS C1, Odoo's "Duplicate"): a copy of every record a selection matches, made by
 * one create of all the copies (`createRecords`, so rights, rules, companies, link checks and the
 * recompute of stored computed fields apply as to any create), answered in the selection's order.
 *
 * A copy takes the record's stored, settable fields and its ManyToMany links (those the caller can
 * read); its OneToMany lines owned by it (the inverse is required or CASCADE: an order's lines, a
 * task's subtasks) are copied with it, recursively, their own lines included; other OneToMany are
 * left alone (a customer's orders stay the customer's). Not copied: `id`, `identifier`, the audit
 * columns, computed fields (recomputed on the copy; an editable one declared `copy: true` is
 * copied), fields declared `copy: false` (they take their default), File fields (the attachment
 * belongs to the original) and reverse ManyToMany fields (tagging the copy of a tag with every
 * task of the original is not what a duplicate means). A Char `_rec_name` of the cloned records
 * (not of their lines) gets ` (copy)`, the name shortened to fit. A copy breaking a unique key is
 * refused as `item <index>: …`, nothing written.
 *
 * Cost: a fixed number of statements per model and relation copied, whatever the number of records.
 */
import { sql } from '../db/sql-fragment.js';
import { assertRight } from '../access/record-access.js';
import { BadRequest } from '../errors.js';
import type { Field } from '../orm/fields/field.js';
import { FileField, ManyToManyField, OneToManyField } from '../orm/fields/relational-fields.js';
import { CharField } from '../orm/fields/scalar-fields.js';
import { AUDIT_FIELDS } from '../orm/generic-fields.js';
import { runSql } from '../orm/execute-sql.js';
import { Model } from '../orm/model.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { inCondition } from '../orm/query/filter-ast.js';
import { QuerySet } from '../orm/queryset.js';
import { RecordBatch } from '../orm/record-batch.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeAnswer, type WriteAnswer } from './record-writes.js';
import { parseSelection, resolveSelection, type ResolveOptions } from './selection.js';

const COPY_SUFFIX = ' (copy)';
const NEVER_COPIED = new Set<string>(['id', 'identifier', 'display_name', ...AUDIT_FIELDS]);

/** Clones the records of a selection object (`{ids}` or a filter); answers the copies in its order. */
export async function cloneRecords(meta: ModelMeta, body: unknown, options: ResolveOptions = {}): Promise<WriteAnswer[]> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequest('The body must be a selection object: {ids} or {filter_str?, name_search?, exclude_ids?}');
  }
  assertRight(meta, 'create');
  const ids = await resolveSelection(meta, parseSelection(body, 'body'), options);
  if (!ids.length) return [];
  const records = await RecordBatch.load(meta, ids);
  const valsList = await copiedValues(meta, records, new Map());
  const recName = meta.recName ? meta.fields.get(meta.recName) : undefined;
  if (recName instanceof CharField && copyPlan(meta).columns.includes(recName)) {
    for (const vals of valsList) {
      if (typeof vals[recName.name] === 'string') vals[recName.name] = withCopySuffix(vals[recName.name] as string, recName.maxLength);
    }
  }
  const copies = await createRecords(meta, valsList, { items: ids.map((_, i) => i) });
  return copies.map((copy) => writeAnswer(meta, copy.id, copy));
}

/** `name (copy)`, the name shortened (by characters, not UTF-16 units) so that the whole fits. */
function withCopySuffix(name: string, maxLength: number): string {
  const chars = Array.from(name);
  const room = maxLength - COPY_SUFFIX.length;
  return (chars.length > room ? chars.slice(0, Math.max(room, 0)).join('') : name) + COPY_SUFFIX;
}

interface CopyPlan {
  /** Stored fields whose values are copied. */
  readonly columns: readonly Field[];
  readonly manyToMany: readonly ManyToManyField[];
  /** OneToMany fields whose lines are copied with the record. */
  readonly lines: readonly OneToManyField[];
}

/** What a copy of a `meta` record takes (see the file comment); `except` is the link to a copied parent. */
function copyPlan(meta: ModelMeta, except?: Field): CopyPlan {
  const declared = declaredFieldNames(meta);
  const columns: Field[] = [];
  const manyToMany: ManyToManyField[] = [];
  const lines: OneToManyField[] = [];
  for (const f of meta.fields.values()) {
    if (f === except || NEVER_COPIED.has(f.name) || f.options.copy === false || !f.isSettable || f instanceof FileField) continue;
    if (f.isComputed && !(f.options.copy === true && f.isEditableComputed)) continue;
    if (f.column) columns.push(f);
    else if (f instanceof ManyToManyField && declared.has(f.name)) manyToMany.push(f);
    else if (f instanceof OneToManyField && (f.inverse.isRequired || f.inverse.onDelete === 'CASCADE')) lines.push(f);
  }
  return { columns, manyToMany, lines };
}

/** Field names the model's classes declare (not the reverse fields other models' `related_name` add). */
function declaredFieldNames(meta: ModelMeta): Set<string> {
  const names = new Set<string>();
  for (let c: any = meta.cls; c && c !== Model; c = Object.getPrototypeOf(c)) {
    if (Object.hasOwn(c, 'fields')) for (const name of Object.keys(c.fields as object)) names.add(name);
  }
  return names;
}

/** A record among all models: `<model>:<id>`. */
const recordKey = (meta: ModelMeta, id: number) => `${meta.name}:${id}`;

/**
 * The values of copies of `records` (one object each, in their order), lines included.
 * `ancestors` gives, for each record, the records it is copied inside of: a line that is one of
 * them (a task that is its own ancestor) is not copied again.
 */
async function copiedValues(
  meta: ModelMeta, records: readonly Model[], ancestors: ReadonlyMap<string, ReadonlySet<string>>, except?: Field,
): Promise<Record<string, unknown>[]> {
  const plan = copyPlan(meta, except);
  const ids = records.map((r) => r.id);
  const valsList = records.map((r) => Object.fromEntries(plan.columns.map((f) => [f.name, r._values[f.name] ?? null])));
  for (const field of plan.manyToMany) {
    const links = await visibleLinks(field, ids);
    records.forEach((r, i) => { valsList[i]![field.name] = links.get(r.id) ?? []; });
  }
  for (const field of plan.lines) {
    const inverse = field.inverseName;
    // Archived lines too: they are part of the record. Read as the caller: lines it cannot see stay behind.
    const found = await new QuerySet(field.target).with_archived().filter(inCondition([inverse], ids)).all();
    const lineAncestors = new Map<string, ReadonlySet<string>>();
    const lines = found.filter((line) => {
      const parent = recordKey(meta, line._values[inverse] as number);
      const chain = new Set([...(ancestors.get(parent) ?? []), parent]);
      lineAncestors.set(recordKey(field.target, line.id), chain);
      return !chain.has(recordKey(field.target, line.id));
    });
    const lineVals = lines.length ? await copiedValues(field.target, lines, lineAncestors, field.inverse) : [];
    const byParent = new Map<number, Record<string, unknown>[]>();
    lines.forEach((line, i) => {
      const parent = line._values[inverse] as number;
      const list = byParent.get(parent) ?? byParent.set(parent, []).get(parent)!;
      list.push(lineVals[i]!);
    });
    records.forEach((r, i) => { valsList[i]![field.name] = byParent.get(r.id) ?? []; });
  }
  return valsList;
}

/** The ids each record of `ids` links to through `field` that the caller can read (archived ones too). */
async function visibleLinks(field: ManyToManyField, ids: readonly number[]): Promise<Map<number, number[]>> {
  const j = field.join;
  const pairs = await runSql<{ source: number; target: number }>(sql`SELECT ${sql.id(j.sourceColumn)} AS source,
    ${sql.id(j.targetColumn)} AS target FROM ${sql.table(j.table)} WHERE ${sql.id(j.sourceColumn)} = ANY(${[...ids]}::int[])`);
  const targets = [...new Set(pairs.map((p) => p.target))];
  const readable = new Set(targets.length ? await new QuerySet(field.target).with_archived().filter(inCondition(['id'], targets)).ids() : []);
  const out = new Map<number, number[]>();
  for (const { source, target } of pairs) {
    if (!readable.has(target)) continue;
    const list = out.get(source) ?? out.set(source, []).get(source)!;
    list.push(target);
  }
  return out;
}
