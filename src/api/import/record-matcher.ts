/**
 * Which existing record each imported record updates (spec §4.8, CONTRACTS C3), for a whole batch
 * in at most one query per key: the `id` column matches by database id (no match is an error: an
 * import never creates a record with a chosen id); otherwise the `identifier` column matches by
 * external id (no match: the record is created with that identifier), and wins over
 * `match_fields`, the natural key (no match, or a blank key value: created; several matches: an
 * error). A row giving both an id and an identifier updates the record of that id, whose
 * identifier an update leaves alone (spec §4.4 rule 3). Only records the caller can read are
 * matched, archived ones included.
 */
import type { Field } from '../../orm/fields/field.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { inCondition, type FilterNode } from '../../orm/query/filter-ast.js';
import { EMPTY_STATE } from '../../orm/query/select-plan.js';
import { selectRows, type Row } from '../../orm/query/select-rows.js';
import { isRecordId } from '../../orm/fields/relational-fields.js';
import type { ImportedRecord } from './import-rows.js';

/** Per record of the batch, the id it updates (undefined: it is created). */
export type Matches = Map<ImportedRecord, number>;

export async function matchRecords(meta: ModelMeta, records: readonly ImportedRecord[], matchFields: readonly Field[], idPath: string): Promise<Matches> {
  const matches: Matches = new Map();
  const byIdentifier = records.filter((r) => r.identifier !== null && r.dbId === null);
  if (byIdentifier.length) {
    const rows = await select(meta, inCondition(['identifier'], [...new Set(byIdentifier.map((r) => r.identifier!))]), [meta.fields.get('identifier')!]);
    const ids = new Map(rows.map((row) => [row.identifier as string, row.id as number]));
    for (const r of byIdentifier) {
      const id = ids.get(r.identifier!);
      if (id !== undefined) matches.set(r, id);
    }
  }
  const byId = records.filter((r) => r.dbId !== null && r.errors.length === 0);
  if (byId.length) {
    const wanted = [...new Set(byId.map((r) => r.dbId!).filter(isRecordId))];
    const found = new Set((wanted.length ? await select(meta, inCondition(['id'], wanted), []) : []).map((row) => row.id as number));
    for (const r of byId) {
      if (found.has(r.dbId!)) matches.set(r, r.dbId!);
      else {
        r.errors.push({
          row: r.row, field: idPath,
          message: isRecordId(r.dbId) ? `Column 'id', value ${r.dbId}: no ${meta.verboseName} has this id (an import never creates a record with a chosen id)` : "Column 'id': not a record id",
        });
      }
    }
  }
  const fields = matchFields.filter((f) => f.name !== 'identifier' && f.name !== 'id');
  const byKey = fields.length
    ? records.filter((r) => r.identifier === null && r.dbId === null && r.errors.length === 0 && fields.every((f) => given(r.vals[f.name])))
    : [];
  if (byKey.length) {
    const filters = fields.map((f) => inCondition([f.name], [...new Set(byKey.map((r) => r.vals[f.name] as string | number))]));
    const rows = await select(meta, filters.length > 1 ? { kind: 'and', children: filters } : filters[0]!, fields);
    const found = new Map<string, number[]>();
    for (const row of rows) {
      const k = keyOf(fields, (f) => f.fromColumn(row[f.name]));
      (found.get(k) ?? found.set(k, []).get(k)!).push(row.id as number);
    }
    for (const r of byKey) {
      const ids = found.get(keyOf(fields, (f) => f.fromColumn(f.toColumn(r.vals[f.name])))) ?? [];
      if (ids.length === 1) matches.set(r, ids[0]!);
      else if (ids.length > 1) {
        r.errors.push({ row: r.row, message: `${ids.length} ${meta.verboseName} records match on ${fields.map((f) => f.name).join(', ')}: the match is ambiguous` });
      }
    }
  }
  // Two rows of one import updating one record: the second is refused (which should win is unclear).
  const first = new Map<number, ImportedRecord>();
  for (const [r, id] of matches) {
    const earlier = first.get(id);
    if (earlier === undefined) first.set(id, r);
    else {
      r.errors.push({ row: r.row, message: `Row ${earlier.row} already updates the same ${meta.verboseName} (id ${id})` });
      matches.delete(r);
    }
  }
  return matches;
}

function given(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '' && !Array.isArray(v);
}

/** The key of a record's match values, the same text whether read from a row or from a cell. */
function keyOf(fields: readonly Field[], value: (f: Field) => unknown): string {
  return JSON.stringify(fields.map((f) => {
    const v = value(f);
    return typeof v === 'number' || f.type === 'Monetary' || f.type === 'Float' || f.type === 'Integer' ? Number(v) : String(v);
  }));
}

function select(meta: ModelMeta, filter: FilterNode, fields: readonly Field[]): Promise<Row[]> {
  return selectRows(meta, { ...EMPTY_STATE, filters: [filter], activeTest: false, publicOnly: true, order: ['id ASC'] }, fields);
}
