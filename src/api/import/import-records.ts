/**
 * `POST /api/import/{model}` (spec §4.8, CONTRACTS C3): rows of a spreadsheet become records,
 * created or — matched by identifier, id or `match_fields` — updated, with their OneToMany lines.
 *
 * The rows are read and converted in memory first (`import-rows.ts`), then handled in batches of a
 * few thousand records: each batch resolves its relation cells with one query per relation column
 * (`relation-resolver.ts`), matches existing records with one query per key (`record-matcher.ts`),
 * checks required values in memory, and writes its valid records with one create and one update
 * call (`import-batches.ts`, which isolates database refusals per record with savepoints). The
 * number of statements grows with the batches, never with the rows of a batch.
 *
 * Modes: by default valid records commit and every failure is an entry of `details.errors`; a
 * record with any error is not written, nor are its lines, and every row ends in exactly one of
 * created, updated or an error naming it (`import-answer.ts`). `atomic`: any error writes nothing
 * (the whole import runs in a savepoint rolled back at the end). `dry_run`: everything runs,
 * targets `create_fields` would add included, in a savepoint that is always rolled back, so the
 * answer says exactly what an import would do and nothing stays.
 */
import { sql } from '../../db/sql-fragment.js';
import { assertRight, activeAccess } from '../../access/record-access.js';
import type { Permission } from '../../access/access-profile.js';
import type { Field } from '../../orm/fields/field.js';
import { ManyToManyField, ManyToOneField } from '../../orm/fields/relational-fields.js';
import { currentEnv } from '../../orm/env.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { importAnswer, type ImportAnswer, type WrittenRecord } from './import-answer.js';
import { writeBatch, type BatchItem } from './import-batches.js';
import { readColumns, readMatchFields, type ImportColumns, type ValueColumn } from './import-columns.js';
import { PROGRESS_EVERY, reportProgress, type ProgressOwner } from './import-progress.js';
import { parseImportRequest } from './import-request.js';
import { cellError, readRows, type ImportedRecord, type RowError } from './import-rows.js';
import { matchRecords } from './record-matcher.js';
import { resolveColumn } from './relation-resolver.js';
import { provisional, rolledBack } from './savepoint.js';

export interface ImportOptions {
  /** Most data rows one call may send. */
  readonly maxRows: number;
  /** Who may read this import's progress (`progress_id`). */
  readonly progressOwner?: ProgressOwner;
  /** Most records per batch (tests lower it to cross batch boundaries). */
  readonly batchRecords?: number;
}

/** Most records of one batch. */
export const BATCH_RECORDS = 5_000;

export async function importRecords(meta: ModelMeta, body: unknown, options: ImportOptions): Promise<ImportAnswer> {
  const request = await parseImportRequest(body, options.maxRows);
  const columns = readColumns(meta, request.fields, request.createFields);
  const matchFields = readMatchFields(meta, request.matchFields, columns);
  const rights = { create: hasRight(meta, 'create'), write: hasRight(meta, 'write') };
  // A caller who may neither create nor change these records gets the 403 of the single routes.
  if (!rights.create && !rights.write) assertRight(meta, 'create');

  // The import's statements run once per batch while the tables they read grow by thousands of
  // rows: a generic plan cached while a table was small (a seq scan) would stay and make each batch
  // scan everything the import wrote so far. Each statement is planned for its own values instead.
  await sql`SET LOCAL plan_cache_mode = force_custom_plan`.execute(currentEnv().work.trx);
  const { records, orphanErrors } = await readRows(request.data, columns, request.dateFormat);
  const total = records.length;
  const progress = (done: number) => {
    if (request.progressId && options.progressOwner) reportProgress(options.progressOwner, request.progressId, meta.name, { done, total });
  };
  progress(0);
  const errors: RowError[] = [...orphanErrors];
  const required = new RequiredFields();
  const written: WrittenRecord[] = [];

  const run = async () => {
    let done = 0;
    // With a progress id, batches are small enough for the socket to hear of every PROGRESS_EVERY rows.
    const batchRecords = Math.min(options.batchRecords ?? BATCH_RECORDS, request.progressId ? PROGRESS_EVERY : Infinity);
    for (const batch of batches(records, batchRecords)) {
      await resolveRelations(batch);
      const valid = batch.filter((r) => !r.errors.length);
      const matches = await matchRecords(meta, valid, matchFields, 'id');
      const items: BatchItem[] = [];
      for (const r of valid) {
        // A row the matching refused (an unknown id, an ambiguous key) is not checked as a create.
        if (r.errors.length) continue;
        const item = prepareItem(meta, r, matches.get(r) ?? null, rights, columns, required);
        if (item && !r.errors.length) items.push(item);
      }
      for (const r of batch) errors.push(...r.errors);
      // Atomic: once anything failed nothing will be kept, so later batches are only checked.
      if (!(request.atomic && errors.length)) {
        const outcome = await writeBatch(meta, items, columns);
        errors.push(...outcome.errors);
        for (const item of items) {
          const id = outcome.written.get(item.record);
          if (id !== undefined) written.push({ record: item.record, id, updated: item.updates !== null });
        }
      }
      done += batch.length;
      progress(done);
    }
  };
  if (request.dryRun) await rolledBack(run);
  else if (request.atomic) await provisional(run, () => errors.length === 0);
  else await run();

  return importAnswer({ dryRun: request.dryRun, atomic: request.atomic, records, written, errors });
}

function hasRight(meta: ModelMeta, perm: Permission): boolean {
  const access = activeAccess();
  return !access || access.rights.get(meta.name)?.has(perm) === true;
}

/**
 * Consecutive records, at most `max` of them. Every statement a batch writes binds one parameter
 * per column, whatever its records (`createRecords`, `update-rows.ts`), so no batch nears
 * PostgreSQL's parameter limit; the bound is there for memory, progress and the bisection of a
 * refused batch.
 */
function* batches(records: readonly ImportedRecord[], max: number): Generator<ImportedRecord[]> {
  for (let i = 0; i < records.length; i += max) yield records.slice(i, i + max);
}

/** Every relation cell of the batch: one resolution per column for its distinct texts. */
async function resolveRelations(batch: readonly ImportedRecord[]): Promise<void> {
  const byColumn = new Map<ImportedRecord['relations'][number]['column'], ImportedRecord['relations'][number][]>();
  const owner = new Map<ImportedRecord['relations'][number], ImportedRecord>();
  for (const r of batch) {
    for (const cell of r.relations) {
      (byColumn.get(cell.column) ?? byColumn.set(cell.column, []).get(cell.column)!).push(cell);
      owner.set(cell, r);
    }
  }
  for (const [column, cells] of byColumn) {
    const texts = [...new Set(cells.flatMap((c) => c.texts))];
    const resolved = await resolveColumn(column, texts, { create: column.create });
    for (const cell of cells) {
      const ids: number[] = [];
      for (const t of cell.texts) {
        const found = resolved.get(t)!;
        if (typeof found === 'number') ids.push(found);
        else owner.get(cell)!.errors.push(cellError(cell.row, column.path, cell.cell, found.error));
      }
      cell.holder[column.field.name] = column.field instanceof ManyToOneField ? ids[0] ?? null : [...new Set(ids)];
    }
  }
}

/** The values a record is written with, after the checks that need no statement (rights, required values). */
function prepareItem(
  meta: ModelMeta, r: ImportedRecord, updates: number | null, rights: { create: boolean; write: boolean }, columns: ImportColumns,
  required: RequiredFields,
): BatchItem | null {
  if (updates === null ? !rights.create : !rights.write) {
    r.errors.push({ row: r.row, message: `You are not allowed to ${updates === null ? 'create' : 'change'} ${meta.verboseName} records` });
    return null;
  }
  // A create without lines writes the values as read (nothing changes them from here on).
  const vals: Record<string, unknown> = updates === null && !r.lines.size ? r.vals : { ...r.vals };
  if (updates !== null) {
    // Spec §4.4 rule 3: an update leaves the identifier and the audit columns alone.
    delete vals.identifier;
    delete vals.created_date;
    for (const f of r.blank) {
      if (f.name === 'identifier' || f.name === 'created_date') continue;
      vals[f.name] = f instanceof ManyToManyField ? [] : null;
    }
  }
  for (const [field, lines] of r.lines) {
    vals[field.name] = lines.map((l) => l.vals);
    const paths = columns.lines.find((l) => l.field === field)?.columns ?? [];
    for (const line of lines) missingRequired(required.of(field.target), line.vals, 'create', field.inverseName, line.row, r, paths);
  }
  missingRequired(required.of(meta), vals, updates === null ? 'create' : 'update', null, r.row, r, columns.record);
  return { record: r, updates, vals };
}

/** Per model, its required stored, not computed fields (in the model's field order), looked up once per import. */
class RequiredFields {
  private readonly byModel = new Map<ModelMeta, Field[]>();

  of(meta: ModelMeta): Field[] {
    let fields = this.byModel.get(meta);
    if (!fields) {
      fields = [...meta.fields.values()].filter((f) => f.isRequired && f.column && !f.isComputed);
      this.byModel.set(meta, fields);
    }
    return fields;
  }
}

/** Required fields a create leaves empty (no value, no default), or an update clears. */
function missingRequired(
  required: readonly Field[], vals: Record<string, unknown>, mode: 'create' | 'update', parentLink: string | null, row: number, r: ImportedRecord,
  columns: readonly ValueColumn[],
): void {
  for (const f of required) {
    if (f.name === parentLink) continue;
    const v = vals[f.name];
    const empty = v === null || v === '' || (v === undefined && mode === 'create' && f.options.default === undefined);
    if (empty) r.errors.push(requiredError(f, row, columns.find((c) => c.field === f)?.path));
  }
}

function requiredError(f: Field, row: number, path: string | undefined): RowError {
  if (path) return { row, field: path, message: `Column '${path}': a value is required (${f.model.verboseName} '${f.name}')` };
  return { row, message: `'${f.name}' (${f.label}) of ${f.model.verboseName} is required, and no column gives it` };
}
