/**
 * Keeps stored computed fields true: after a create, write or delete, finds the records whose
 * computed values depend on what changed (through the trigger graph), recomputes them with the
 * batch prefetch and writes only the values that changed — in one UPDATE per field — which may
 * in turn trigger fields that depend on those (order line subtotal → order total).
 */
import { currentEnv, withEnv } from '../env.js';
import { sql } from '../../db/sql-fragment.js';
import type { Field } from '../fields/field.js';
import { OneToManyField, RelationalField } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';
import { runSql } from '../execute-sql.js';
import { matchingIds } from '../query/matching-ids.js';
import { inCondition } from '../query/filter-ast.js';
import { RecordBatch } from '../record-batch.js';
import { roundedToCurrency } from './monetary-rounding.js';
import { markFailedRecord } from './item-errors.js';
import { lockedRows, updateStrength } from './row-locks.js';
import type { Row } from '../query/select-rows.js';
import { companyField } from '../company-fields.js';
import { assertCompanyConsistency, companyLinks } from './company-consistency.js';

const MAX_CASCADE = 32;

/** (owner model, computed field) → ids to recompute. */
export type Pending = Map<ModelMeta, Map<Field, Set<number>>>;

export function newPending(): Pending {
  return new Map();
}

function addPending(pending: Pending, owner: ModelMeta, field: Field, ids: Iterable<number>): void {
  let byField = pending.get(owner);
  if (!byField) pending.set(owner, (byField = new Map()));
  let set = byField.get(field);
  if (!set) byField.set(field, (set = new Set()));
  for (const id of ids) set.add(id);
}

/** Field names of `meta` that have triggers (for create/delete, where every field "changes"). */
export function triggeredFieldNames(meta: ModelMeta): string[] {
  const prefix = `${meta.name}.`;
  return [...meta.registry.triggers.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
}

/** True when some changed field could move records between dependents (a relation). */
export function changesLinks(meta: ModelMeta, fieldNames: Iterable<string>): boolean {
  for (const name of fieldNames) {
    if (meta.fields.get(name) instanceof RelationalField && meta.registry.triggers.has(`${meta.name}.${name}`)) return true;
  }
  return false;
}

export interface DependentsHints {
  /** The current values of records `ids` by field name (new records: their inserted rows). */
  readonly rows?: readonly Row[];
  /** Computed fields of these same records that are already up to date (computed before the INSERT). */
  readonly upToDate?: ReadonlySet<Field>;
}

/** Adds to `pending` the records whose computed fields depend on `fieldNames` of records `ids`. */
export async function collectDependents(
  meta: ModelMeta, ids: readonly number[], fieldNames: readonly string[], pending: Pending, hints: DependentsHints = {},
): Promise<void> {
  if (!ids.length) return;
  // Most writes trigger nothing: settled here, without an elevated environment to run nothing in.
  let triggers = false;
  for (const name of fieldNames) if ((triggers = meta.registry.triggers.has(`${meta.name}.${name}`))) break;
  if (!triggers) return;
  // Stored values are the platform's: their dependents are found whatever the user may read.
  if (!currentEnv().su) return withEnv({ su: true }, () => collectDependents(meta, ids, fieldNames, pending, hints));
  // Several changed fields (or depends paths) often lead to the same records through the same
  // path (`tasks` and `tasks.active` both reach a task's project): look each path up once.
  const byPath = new Map<string, { owner: ModelMeta; prefix: readonly string[]; fields: Set<Field> }>();
  for (const name of fieldNames) {
    for (const t of meta.registry.triggers.get(`${meta.name}.${name}`) ?? []) {
      if (!t.prefix.length) {
        if (!(t.owner === meta && hints.upToDate?.has(t.field))) addPending(pending, t.owner, t.field, ids);
        continue;
      }
      const key = `${t.owner.name}:${t.prefix.join('__')}`;
      const entry = byPath.get(key) ?? { owner: t.owner, prefix: t.prefix, fields: new Set<Field>() };
      entry.fields.add(t.field);
      byPath.set(key, entry);
    }
  }
  for (const { owner, prefix, fields } of byPath.values()) {
    const owners = ownersFromRows(owner, prefix, meta, hints.rows)
      ?? await matchingIds(owner, inCondition([...prefix, 'id'], ids));
    for (const field of fields) addPending(pending, owner, field, owners);
  }
}

/**
 * The owners one OneToMany step away, read off the changed records' own link (a task's `project`
 * names the project whose `tasks` changed) instead of queried; undefined when that does not apply.
 */
function ownersFromRows(owner: ModelMeta, prefix: readonly string[], meta: ModelMeta, rows?: readonly Row[]): number[] | undefined {
  if (!rows || prefix.length !== 1) return undefined;
  const step = owner.fields.get(prefix[0]!);
  if (!(step instanceof OneToManyField) || step.target !== meta) return undefined;
  const owners = new Set<number>();
  for (const row of rows) {
    const id = row[step.inverseName];
    if (typeof id === 'number') owners.add(id);
  }
  return [...owners];
}

/**
 * Values written explicitly to editable computed fields (`editable: true`), by field: the
 * recompute that the same write triggers leaves these records' values as written.
 */
export type Protected = Map<Field, Set<number>>;

/** The records of `ids` whose editable computed fields `columns` names, as a `Protected` map. */
export function protectedValues(columns: Iterable<Field>, ids: readonly number[]): Protected {
  const out: Protected = new Map();
  for (const f of columns) if (f.isEditableComputed) out.set(f, new Set(ids));
  return out;
}

/**
 * Recomputes everything pending, cascading to fields that depend on the recomputed ones; returns
 * the records whose stored values changed. `protect` names values written by the caller.
 */
export async function flushRecompute(pending: Pending, protect: Protected = new Map()): Promise<Changed> {
  if (!pending.size) return new Map(); // nothing to recompute (most writes): no elevated environment either
  const companies: Changed = new Map();
  const changed = await flush(pending, protect, 0, new Map(), companies);
  // A recomputed company (a line takes its order's) must still agree with the records' links.
  for (const [owner, ids] of companies) await assertCompanyConsistency(owner, [...ids]);
  return changed;
}

async function flush(pending: Pending, protect: Protected, depth: number, changedRecords: Changed, companies: Changed): Promise<Changed> {
  // Stored computed fields are computed as the platform (like Odoo's compute_sudo for stored
  // fields): a value must not depend on who happened to trigger the recompute.
  if (!currentEnv().su) return withEnv({ su: true }, () => flush(pending, protect, depth, changedRecords, companies));
  if (depth > MAX_CASCADE) throw new Error('Stored computed fields depend on each other in a cycle');
  const next = newPending();
  for (const [owner, byField] of pending) {
    for (const [field, idSet] of byField) {
      const kept = protect.get(field);
      const ids = kept ? [...idSet].filter((id) => !kept.has(id)) : [...idSet];
      const changed = await recomputeField(owner, field, ids);
      if (changed.length) {
        const set = changedRecords.get(owner) ?? new Set<number>();
        for (const id of changed) set.add(id);
        changedRecords.set(owner, set);
        if (field === companyField(owner) && companyLinks(owner).length) {
          const moved = companies.get(owner) ?? companies.set(owner, new Set()).get(owner)!;
          for (const id of changed) moved.add(id);
        }
      }
      await collectDependents(owner, changed, [field.name], next);
    }
  }
  if (next.size) await flush(next, protect, depth + 1, changedRecords, companies);
  return changedRecords;
}

/** Records whose stored computed values a recompute changed, by model. */
export type Changed = Map<ModelMeta, Set<number>>;

/** Recomputes one stored field on `ids`; returns the ids whose value changed. */
async function recomputeField(meta: ModelMeta, field: Field, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  const records = await RecordBatch.load(meta, ids);
  if (!records.length) return [];
  const method = field.options.calculate!;
  // A compute that throws names its record, so a bulk write can name the item behind it.
  const computed = await Promise.all(records.map(async (r) => {
    try {
      return await (r as any)[method]();
    } catch (err) {
      throw markFailedRecord(err, meta, r.id);
    }
  }));
  const values = await roundedToCurrency(meta, field, records, computed);
  const changedIds: number[] = [];
  const changedValues: unknown[] = [];
  records.forEach((rec, i) => {
    const next = field.toColumn(values[i] ?? null);
    const current = rec._values[field.name];
    if (!sameValue(field, current, next)) {
      changedIds.push(rec.id);
      changedValues.push(next instanceof Buffer ? next : next === null ? null : next);
    }
  });
  if (!changedIds.length) return [];
  const type = sql.raw(`${field.sqlType()}[]`); // from the field declaration, never from input
  const rows = sql`(SELECT unnest(${changedIds}::int[]) AS id, unnest(${changedValues}::${type}) AS val) AS v`;
  // Several rows are locked in id order first (`row-locks.ts`): a cascade must not lock the
  // records it updates (an order's total) in another order than a bulk write of those records.
  const from = changedIds.length > 1 ? lockedRows(meta, rows, 'v', updateStrength(meta, [field])) : rows;
  await runSql(sql`UPDATE ${sql.table(meta.table)} AS t SET ${sql.id(field.column!)} = v.val
    FROM ${from}
    WHERE t.id = v.id`);
  return changedIds;
}

function sameValue(field: Field, a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return false;
  if (field.type === 'Datetime') return new Date(a as string).getTime() === new Date(b as string).getTime();
  if (['Integer', 'Float', 'Monetary', 'ManyToOne'].includes(field.type)) return Number(a) === Number(b);
  return String(a) === String(b);
}
