/**
 * Creates records: defaults, validation, audit columns, the new records' own computed fields
 * where they need nothing the INSERT creates (precompute.ts), one INSERT … RETURNING for all rows,
 * ManyToMany links in one INSERT per field, OneToMany lines created or linked, setters of
 * writable computed fields, then the remaining computed fields and the records depending on them.
 * The API's create of one record that needs nothing but its INSERT commits by itself (create-alone.ts).
 */
import { sql, type SqlFragment } from '../../db/sql-fragment.js';
import { currentEnv, withEnv } from '../env.js';
import type { Field } from '../fields/field.js';
import type { Model } from '../model.js';
import type { ModelMeta } from '../model-meta.js';
import { runGuarded } from '../execute-sql.js';
import { RecordBatch } from '../record-batch.js';
import { checkRequired, sortValues, type SortedValues } from './write-values.js';
import { linkManyToMany, writeLines, type LineWrite } from './write-relations.js';
import { ManyToOneField, type OneToManyField } from '../fields/relational-fields.js';
import { atItem, atItemAsync, labelItem, soleItem, type ItemIndexes } from './item-errors.js';
import { assertDistinctKeys, attributeFailure } from './item-keys.js';
import { collectDependents, flushRecompute, newPending, triggeredFieldNames, type Protected } from './recompute.js';
import { precompute, precomputableFields } from './precompute.js';
import { selectList, type Row } from '../query/select-rows.js';
import { columnValue, currencyOf, roundedExpression } from './monetary-rounding.js';
import { activePolicy } from '../access-policy.js';
import { companyValuedFields } from '../company-fields.js';
import { assertCompanyConsistency, companyLinks } from './company-consistency.js';
import { prepareFileCreate } from './file-values.js';
import { isAloneRefusal, RefusedAlone, REFUSED_COLUMN, refusingColumn } from './create-alone.js';
import { sendsNextAlone } from '../../db/direct-statements.js';
import { assertUnlocked, hasStateLocks } from '../state-locks.js';

const ALONE = { alone: true } as const;

export interface CreateOptions {
  /** The link to the parent a OneToMany write creates these records under (set by the write path, not the caller). */
  readonly parentLink?: Field;
  /** Per record, the bulk item it comes from: refusals name it (`item-errors.ts`). */
  readonly items?: ItemIndexes;
  /**
   * Nothing else runs in the caller's unit of work, before or after (the API's create of one
   * record): when the create needs one statement, it commits by itself (`create-alone.ts`).
   */
  readonly alone?: boolean;
}

export async function createRecords(meta: ModelMeta, valsList: readonly Record<string, unknown>[], options: CreateOptions = {}): Promise<Model[]> {
  return (await guardedCreate(meta, valsList, options, 'records')) as Model[];
}

/**
 * The API's create of one record, as the whole of its unit of work (`alone`): the same checks and
 * writes as `createRecords`, answered with the new record's id, `name` and what its display name
 * needs (`answerFields`). Commits by itself when it can (`create-alone.ts`), and then its INSERT
 * returns only those: a dozen columns fewer for the driver to describe and parse (issue 29).
 */
export async function createForAnswer(meta: ModelMeta, vals: Record<string, unknown>): Promise<Row> {
  const [row] = (await guardedCreate(meta, [vals], { alone: true }, 'answer')) as Row[];
  return row!;
}

/**
 * `createRecords` for a caller that needs only the new records' ids, in the order of `valsList`
 * (the import): the same checks and writes, but the INSERT returns only what the write path
 * itself reads back (ids, links, the guard), and the records are neither built nor reloaded.
 */
export async function createRecordIds(meta: ModelMeta, valsList: readonly Record<string, unknown>[], options: CreateOptions = {}): Promise<number[]> {
  return (await guardedCreate(meta, valsList, options, 'ids')) as number[];
}

/** What a create returns: the records, their ids only (the import), or the API's answer's columns. */
type CreateMode = 'records' | 'ids' | 'answer';

async function guardedCreate(meta: ModelMeta, valsList: readonly Record<string, unknown>[], options: CreateOptions, mode: CreateMode): Promise<Model[] | number[] | Row[]> {
  if (!valsList.length) return [];
  const items = options.items;
  const sortedList: SortedValues[] = [];
  let ids: number[] = [];
  try {
    try {
      return await create(meta, valsList, options, sortedList, (created) => (ids = created), mode);
    } catch (err) {
      if (!(err instanceof RefusedAlone)) throw err;
      // Nothing was written: the ordinary way, in the transaction, says what refused it.
      sortedList.length = 0;
      return await create(meta, valsList, { ...options, alone: false }, sortedList, (created) => (ids = created), mode);
    }
  } catch (err) {
    throw attributeFailure(err, meta, ids, sortedList.map((s) => s.columns), items);
  }
}

async function create(
  meta: ModelMeta, valsList: readonly Record<string, unknown>[], options: CreateOptions,
  sortedList: SortedValues[], onInserted: (ids: number[]) => void, mode: CreateMode,
): Promise<Model[] | number[] | Row[]> {
  const idsOnly = mode === 'ids';
  const env = currentEnv();
  const items = options.items;
  const policy = activePolicy();
  policy?.assertRight(meta, 'create');
  // The model's veto sees the whole batch: what it refuses names an item only when all come from one.
  // A line of a record in a locked state cannot be added (state-locks.ts).
  if (hasStateLocks(meta)) await atItemAsync(soleItem(items), () => assertUnlocked(meta, { op: 'create', vals: valsList }, Boolean(options.parentLink)));
  const checkChange = meta.cls._check_change;
  if (checkChange) await atItemAsync(soleItem(items), () => checkChange.call(meta.cls, { op: 'create', vals: valsList }));
  // File fields: uploads become attachments first (file-values.ts).
  const uploads = prepareFileCreate(meta, valsList, items);
  const files = uploads && (await uploads);
  if (files) valsList = files.valsList;
  const now = new Date().toISOString();
  const plan = createPlan(meta);
  /** What each record's caller gave (before defaults): the links to check (only numbers can be links). */
  const given: ReadonlyMap<Field, unknown>[] = [];
  const defaults = new CallDefaults();
  for (let i = 0; i < valsList.length; i++) {
    // Labelled like `atItem`, without an async step per record when no default is async.
    try {
      const sorted = sortValues(meta, valsList[i]!, 'create');
      const links = numericValues(sorted.columns);
      for (const f of plan.defaulted) {
        if (sorted.columns.has(f)) continue;
        let value = defaults.value(f);
        if (isThenable(value)) value = await value;
        sorted.columns.set(f, f.toColumn(value));
      }
      checkRequired(meta, sorted.columns, 'create', plan.required);
      policy?.assertCompanyValues(meta, sorted, plan.companyValued);
      const created = sorted.columns.get(plan.createdDate);
      if (created === undefined || created === null) sorted.columns.set(plan.createdDate, now);
      sorted.columns.set(plan.createdBy, env.uid);
      sorted.columns.set(plan.updatedDate, now);
      sorted.columns.set(plan.updatedBy, env.uid);
      sortedList.push(sorted);
      given.push(links);
    } catch (err) {
      throw labelItem(err, items?.[i]);
    }
  }
  if (items) assertDistinctKeys(meta, sortedList.map((s) => s.columns), items);

  // Links to records the caller may not read are refused by the INSERT's own RETURNING (no statement of its own);
  // the create rules too, when they read only the new row (else a SELECT after the INSERT).
  const authorized = policy?.statementChecks(meta, 'create', given, { except: options.parentLink, uploaded: files?.uploaded }) ?? null;
  const links = authorized?.links ?? null;
  const rules = authorized?.rules ?? null;

  // The new records' own computed fields, where they need nothing the INSERT creates.
  const setterRuns = sortedList.some((s) => s.setters.length);
  const writtenRelations = new Set<Field>();
  for (const s of sortedList) {
    for (const [f] of s.manyToMany) writtenRelations.add(f);
    for (const [f] of s.oneToMany) writtenRelations.add(f);
  }
  const precomputed = setterRuns ? [] : writtenRelations.size ? precomputableFields(meta, writtenRelations) : plan.precomputable;
  if (precomputed.length) await precompute(meta, sortedList, precomputed, items);

  const seen = new Set<Field>();
  for (const s of sortedList) for (const f of s.columns.keys()) seen.add(f);
  const columns = [...seen];
  // One record, and nothing to do after its INSERT: it commits by itself (`create-alone.ts`).
  const alone = options.alone === true && !idsOnly && sortedList.length === 1 && !files && !setterRuns && !writtenRelations.size
    && !authorized?.rulesAfter && !plan.triggered.length && plan.computedStored.every((f) => precomputed.includes(f))
    && !companyLinks(meta).length && !meta.cls._after_change && !env.work.pendingWrites.size && sendsNextAlone(env.work.trx);
  // Every stored column (the records are built from the rows), or, for ids only, the id and the
  // links: `collectDependents` reads a record's parent off its link (`ownersFromRows`).
  // Alone, nothing reads the new row but the answer; else the records are built from it.
  const returning = idsOnly ? plan.returning.ids : alone && mode === 'answer' ? plan.returning.answer : plan.returning.stored;
  const checks = alone
    ? refusingColumn(meta.table, [...(links?.conditions ?? []), ...(rules ? [rules.condition] : [])])
    : sql`${links?.returning ?? sql``}${rules?.returning ?? sql``}`;
  const rowsSql = insertedRows(meta, columns, sortedList);
  let inserted: Row[];
  try {
    inserted = await runGuarded<Row>((guard) => sql`INSERT INTO ${plan.table}
      (${columnList(plan, columns)}) ${rowsSql}
      RETURNING ${returning}${guard ? sql`, ${guard}` : sql``}${checks}`, alone ? ALONE : undefined);
  } catch (err) {
    throw alone && isAloneRefusal(err) ? new RefusedAlone() : err;
  }
  const ids = inserted.map((r) => r.id as number);
  onInserted(ids);
  if (alone) {
    for (const row of inserted) delete row[REFUSED_COLUMN];
    if (mode === 'answer') return inserted;
  } else {
    // Rows come back in the order of VALUES (or of unnest): row i is record i.
    if (links) inserted.forEach((row, i) => atItem(items?.[i], () => links.verify([row], [given[i]!])));
    if (rules) rules.verify(inserted);
    else if (authorized?.rulesAfter) await policy!.assertRecordsAllowed(meta, 'create', ids);
  }
  if (files) await files.finish(ids);

  await linkManyToMany(meta, ids, sortedList.map((s) => s.manyToMany), 'create', items);
  for (const [field, writes] of lineWrites(ids, sortedList, items)) await writeLines(field, writes, 'create');
  if (setterRuns) {
    const records = await RecordBatch.load(meta, ids);
    for (let i = 0; i < records.length; i++) {
      for (const [field, value] of sortedList[i]!.setters) await atItemAsync(items?.[i], () => (records[i] as any)[field.options.setter!](value));
    }
  }
  // The computed fields left for after the INSERT, and whatever depends on the new records;
  // values given to editable computed fields stay as given.
  const pending = newPending();
  const upToDate = new Set(precomputed);
  const protect: Protected = new Map();
  for (const f of plan.editableComputed) {
    const given = ids.filter((_, i) => sortedList[i]!.columns.has(f));
    if (given.length) protect.set(f, new Set(given));
  }
  for (const f of plan.computedStored) {
    if (upToDate.has(f)) continue;
    const byField = pending.get(meta) ?? new Map();
    byField.set(f, new Set(ids));
    pending.set(meta, byField);
  }
  await collectDependents(meta, ids, plan.triggered, pending, { rows: inserted, upToDate });
  const changed = await flushRecompute(pending, protect);
  await assertCompanyConsistency(meta, ids);
  const after = meta.cls._after_change;
  if (after) await atItemAsync(soleItem(items), () => after.call(meta.cls, { op: 'create', ids, vals: valsList }));
  if (idsOnly) return ids;
  // The inserted rows are the records as stored, unless something written since may have changed them.
  // Reloaded as the platform, like the INSERT's RETURNING: a create returns every record it made,
  // even one a read rule keeps from its creator (a bulk create answers one entry per item).
  const stale = setterRuns || writtenRelations.size > 0 || ids.some((id) => changed.get(meta)?.has(id));
  const records = stale ? await withEnv({ su: true }, () => RecordBatch.load(meta, ids)) : RecordBatch.fromRows(meta, inserted);
  return mode === 'answer' ? records.map((r) => r._values) : records;
}

/**
 * The rows of the INSERT. Several records travel as one array parameter per column
 * (`SELECT … FROM unnest($1::varchar(255)[], …)`, as `update-rows.ts` does for updates): neither
 * the statement's text nor its parameters grow with the records, whatever the model's width, so
 * no number of records nears PostgreSQL's 65,535-parameter limit nor costs a parse of a huge
 * VALUES list. A Monetary amount is rounded in the SELECT to the currency its row writes. A single
 * record is one VALUES row (a bounded statement, the text of the API's create).
 */
function insertedRows(meta: ModelMeta, columns: readonly Field[], sortedList: readonly SortedValues[]): SqlFragment {
  if (sortedList.length === 1) {
    const s = sortedList[0]!;
    return sql`VALUES (${sql.join(columns.map((f) => (s.columns.has(f) ? columnValue(meta, f, s.columns.get(f), s.columns, false) : null)))})`;
  }
  // The types come from the field declarations, never from input. A column every record gives
  // the same plain value (the audit columns, most defaults) is bound once, not as an array of
  // thousands of copies the driver would serialise one by one.
  const arrays: SqlFragment[] = [];
  const values = new Map<Field, SqlFragment>();
  columns.forEach((f, k) => {
    const column = sortedList.map((s) => s.columns.get(f) ?? null);
    const first = column[0];
    const scalar = first === null || typeof first === 'string' || typeof first === 'number' || typeof first === 'boolean';
    // At least one array: it gives the number of rows.
    if (scalar && (arrays.length || k < columns.length - 1) && column.every((v) => v === first)) {
      values.set(f, sql`${first}::${sql.raw(f.sqlType())}`);
    } else {
      values.set(f, sql.ref(`u.c${arrays.length}`));
      arrays.push(sql`${column}::${sql.raw(`${f.sqlType()}[]`)}`);
    }
  });
  const selected = columns.map((f) => {
    const link = currencyOf(meta, f);
    const currency = link && values.get(link);
    return currency ? roundedExpression(link, values.get(f), currency) : values.get(f)!;
  });
  const names = arrays.map((_, k) => sql.id(`c${k}`));
  return sql`SELECT ${sql.join(selected)} FROM unnest(${sql.join(arrays)}) AS u(${sql.join(names)})`;
}

/**
 * The defaults of one create call. A default function runs per record, except an async one (a
 * lookup: the first stage, the company's currency, the units of measure): its first answer is
 * shared by every record of the call, so creating 1,000 orders looks the first stage up once.
 */
class CallDefaults {
  private readonly shared = new Map<Field, Promise<unknown>>();

  value(f: Field): unknown {
    const known = this.shared.get(f);
    if (known) return known;
    const value = f.defaultValue();
    if (value instanceof Promise) this.shared.set(f, value);
    return value;
  }
}

/** The OneToMany lines of every new record, by field: written together (write-relations.ts). */
function lineWrites(ids: readonly number[], sortedList: readonly SortedValues[], items: ItemIndexes | undefined): Map<OneToManyField, LineWrite[]> {
  const byField = new Map<OneToManyField, LineWrite[]>();
  sortedList.forEach((s, i) => {
    for (const [field, lines] of s.oneToMany) {
      const writes = byField.get(field) ?? byField.set(field, []).get(field)!;
      writes.push({ parentId: ids[i]!, lines, item: items?.[i] });
    }
  });
  return byField;
}

/**
 * What `create` reads of the model's fields, worked out once per model of a registry (a registry
 * never changes once built): walking every field and every trigger of the registry on each call
 * was a measurable share of a one-record create (issue 15).
 */
interface CreatePlan {
  /** Stored, not computed fields with a default, in the model's field order. */
  readonly defaulted: readonly Field[];
  /** Required stored, not computed fields, in the model's field order (`checkRequired`). */
  readonly required: readonly Field[];
  readonly companyValued: ReturnType<typeof companyValuedFields>;
  readonly createdDate: Field;
  readonly createdBy: Field;
  readonly updatedDate: Field;
  readonly updatedBy: Field;
  /**
   * The INSERT's RETURNING lists, built once: every stored field (records are built from the
   * rows), the id and the links (`createRecordIds`: `collectDependents` reads parents off links),
   * the answer's (id, `name`, the display name's field: `createForAnswer` run alone).
   */
  readonly returning: { readonly stored: SqlFragment; readonly ids: SqlFragment; readonly answer: SqlFragment };
  readonly table: SqlFragment;
  /** The INSERT's column lists met so far, by column names (a model's creates use a few). */
  readonly columnLists: Map<string, SqlFragment>;
  /** Stored computed fields: computed after the INSERT unless precomputed. */
  readonly computedStored: readonly Field[];
  /** Editable computed fields: a value given on create stays as given. */
  readonly editableComputed: readonly Field[];
  /** The model's fields that trigger recomputes elsewhere (`triggeredFieldNames`). */
  readonly triggered: readonly string[];
  /** The computed fields computable before the INSERT when no relation is written with it. */
  readonly precomputable: readonly Field[];
}

const plans = new WeakMap<ModelMeta, CreatePlan>();

function createPlan(meta: ModelMeta): CreatePlan {
  let plan = plans.get(meta);
  if (!plan) {
    plan = buildCreatePlan(meta);
    plans.set(meta, plan);
  }
  return plan;
}

function buildCreatePlan(meta: ModelMeta): CreatePlan {
  const defaulted: Field[] = [];
  const required: Field[] = [];
  for (const f of meta.fields.values()) {
    if (!f.column || f.isComputed) continue;
    if (f.options.default !== undefined) defaulted.push(f);
    if (f.isRequired) required.push(f);
  }
  const field = (name: string) => meta.fields.get(name)!;
  const fields = [...meta.fields.values()];
  const stored = RecordBatch.storedFields(meta);
  const idsAndLinks = stored.filter((f) => f.name === 'id' || f instanceof ManyToOneField);
  return {
    defaulted, required, companyValued: companyValuedFields(meta),
    createdDate: field('created_date'), createdBy: field('created_by'), updatedDate: field('updated_date'), updatedBy: field('updated_by'),
    returning: {
      stored: selectList(meta.table, stored),
      ids: selectList(meta.table, idsAndLinks),
      answer: selectList(meta.table, stored.filter((f) => f.name === 'name' || f.name === meta.recName)),
    },
    table: sql.table(meta.table),
    columnLists: new Map(),
    computedStored: fields.filter((f) => f.isComputed && f.isStored),
    editableComputed: fields.filter((f) => f.isEditableComputed),
    triggered: triggeredFieldNames(meta),
    precomputable: precomputableFields(meta, new Set()),
  };
}

/** Column lists remembered per model: bounded, whatever combinations of fields callers give. */
const MAX_COLUMN_LISTS = 32;

/** `"a", "b", …` of the INSERT, built once per model and set of columns. */
function columnList(plan: CreatePlan, columns: readonly Field[]): SqlFragment {
  let key = '';
  for (const f of columns) key += `${f.column!},`;
  let list = plan.columnLists.get(key);
  if (!list) {
    list = sql.join(columns.map((f) => sql.id(f.column!)));
    if (plan.columnLists.size >= MAX_COLUMN_LISTS) plan.columnLists.clear();
    plan.columnLists.set(key, list);
  }
  return list;
}

/**
 * The numbers among a record's column values, as given: the only values `linkCheck` looks at
 * (links are ids), without copying every value of every record.
 */
function numericValues(columns: ReadonlyMap<Field, unknown>): ReadonlyMap<Field, unknown> {
  let out: Map<Field, unknown> | null = null;
  for (const [f, v] of columns) if (typeof v === 'number') (out ??= new Map()).set(f, v);
  return out ?? NO_VALUES;
}
const NO_VALUES: ReadonlyMap<Field, unknown> = new Map();

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value instanceof Promise || (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function');
}
