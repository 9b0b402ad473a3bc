/**
 * Serializes records for the API along a field tree, prefetching each relation of the tree with
 * one query for all records of the level (never one per record): 50 tasks with `stage.name` and
 * `tags.name` cost three statements whatever the page size. A ManyToOne comes back as
 * `{id, display_name, …requested}` or null; a to-many as an array of such objects.
 */
import type { Field } from '../fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField, RelationalField } from '../fields/relational-fields.js';
import { displayName } from '../display-name.js';
import { EMPTY_STATE, type QueryState } from '../query/select-plan.js';
import { inCondition } from '../query/filter-ast.js';
import { selectLinkedRows, selectRows, withRecName, type Row } from '../query/select-rows.js';
import { RecordBatch } from '../record-batch.js';
import type { FieldTree } from './field-tree.js';

export type Serialized = Record<string, unknown>;

/** Stored fields the rows of a tree level must carry. */
export function columnsFor(tree: FieldTree): Field[] {
  return withRecName(tree.meta, [...tree.fields.values()].map((e) => e.field));
}

/** Serializes already-selected rows (which carry `columnsFor(tree)`) and their relations. */
export async function serializeRows(tree: FieldTree, rows: readonly Row[], publicOnly: boolean): Promise<Serialized[]> {
  const { meta } = tree;
  const out: Serialized[] = rows.map((row) => {
    const obj: Serialized = { id: row.id, display_name: displayName(meta, row) };
    for (const [name, { field }] of tree.fields) {
      if (name === 'id' || name === 'display_name') continue;
      if (field.column && !(field instanceof RelationalField)) obj[name] = field.fromColumn(row[name]);
    }
    return obj;
  });
  const ids = rows.map((r) => r.id as number);
  const state: QueryState = { ...EMPTY_STATE, publicOnly };
  for (const [name, { field, children }] of tree.fields) {
    const sub: FieldTree = children ?? { meta: (field as RelationalField).target ?? meta, fields: new Map() };
    if (field instanceof ManyToOneField && field.column) {
      const targetIds = [...new Set(rows.map((r) => r[name]).filter((v): v is number => typeof v === 'number'))];
      const byId = new Map<number, Serialized>();
      if (targetIds.length) {
        // A linked record is shown even when archived: the archivable default is for listing.
        const targetRows = await selectRows(sub.meta, {
          ...state, activeTest: false, filters: [inCondition(['id'], targetIds)], order: ['id ASC'],
        }, columnsFor(sub));
        for (const s of await serializeRows(sub, targetRows, publicOnly)) byId.set(s.id as number, s);
      }
      rows.forEach((r, i) => (out[i]![name] = byId.get(r[name] as number) ?? null));
    } else if (field instanceof OneToManyField) {
      const grouped = groupBy(ids.length ? await selectRows(sub.meta, {
        ...state, filters: [inCondition([field.inverseName], ids)],
      }, [...columnsFor(sub), field.inverse]) : [], field.inverseName);
      await assignGroups(out, ids, name, sub, grouped, publicOnly);
    } else if (field instanceof ManyToManyField) {
      const grouped = groupBy(ids.length ? await selectLinkedRows(sub.meta, field.join, ids, state, columnsFor(sub)) : [], '__parent');
      await assignGroups(out, ids, name, sub, grouped, publicOnly);
    } else if (field.isComputed && !field.isStored && name !== 'display_name') {
      const records = await RecordBatch.load(meta, ids);
      const method = field.options.calculate!;
      const values = await Promise.all(records.map((rec) => (rec as any)[method]()));
      records.forEach((rec, i) => {
        const at = ids.indexOf(rec.id);
        if (at >= 0) out[at]![name] = values[i] ?? null;
      });
    }
  }
  return out;
}

function groupBy(rows: Row[], key: string): Map<number, Row[]> {
  const map = new Map<number, Row[]>();
  for (const r of rows) {
    const k = r[key] as number;
    let list = map.get(k);
    if (!list) map.set(k, (list = []));
    list.push(r);
  }
  return map;
}

async function assignGroups(
  out: Serialized[], ids: number[], name: string, sub: FieldTree, grouped: Map<number, Row[]>, publicOnly: boolean,
): Promise<void> {
  const all = [...grouped.values()].flat();
  const serialized = await serializeRows(sub, all, publicOnly);
  const byRow = new Map<Row, Serialized>(all.map((r, i) => [r, serialized[i]!]));
  ids.forEach((id, i) => (out[i]![name] = (grouped.get(id) ?? []).map((r) => byRow.get(r)!)));
}

