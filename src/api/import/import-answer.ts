/**
 * The answer of an import (spec §4.8, CONTRACTS C3), in which every input row ends in exactly one
 * of created, updated or an error naming it. A record is one unit with its line rows: when one of
 * its rows has an error, the record is not written, and each of its rows without an error of its
 * own gets one saying why it was held back (`held_back: true`), so no row is dropped silently and
 * the failed rows are each record whole. In an atomic import with errors (and its dry run, which
 * answers what that import would do) nothing is written, so every row without an error of its own
 * is held back too. A record neither written nor refused is a bug, never an answer.
 */
import type { ImportedRecord, RowError } from './import-rows.js';

export interface ImportAnswer {
  message: string;
  summary: { total_records: number; created: number; updated: number; errors: number; would_create?: number; would_update?: number };
  details: { creates: { row: number; id?: number }[]; updates: { row: number; id?: number }[]; errors: RowError[] };
  success: boolean;
  valid?: boolean;
  dry_run?: true;
}

/** A record the import wrote (in a dry run: would write), with its id. */
export interface WrittenRecord {
  readonly record: ImportedRecord;
  readonly id: number;
  readonly updated: boolean;
}

export interface ImportOutcome {
  readonly dryRun: boolean;
  readonly atomic: boolean;
  readonly records: readonly ImportedRecord[];
  readonly written: readonly WrittenRecord[];
  /** The errors of the rows themselves (cells, relations, matching, rights, the database's refusals). */
  readonly errors: readonly RowError[];
}

/** Rows a held-back record row lists by number before saying how many more. */
const LISTED_ROWS = 5;

export function importAnswer({ dryRun, atomic, records, written, errors }: ImportOutcome): ImportAnswer {
  const failed = new Set(errors.map((e) => e.row));
  const writtenOf = new Map(written.map((w) => [w.record, w]));
  const nothingKept = atomic && errors.length > 0;
  const rows = new Set(failed);
  const creates: WrittenRecord[] = [];
  const updates: WrittenRecord[] = [];
  const held: RowError[] = [];
  for (const record of records) {
    const own = [record.row, ...record.lineRows];
    for (const r of own) rows.add(r);
    const refused = own.filter((r) => failed.has(r));
    const w = writtenOf.get(record);
    if (w && refused.length) throw new Error(`Import: the record of row ${record.row} was written although its rows ${refused.join(', ')} have errors`);
    if (!refused.length && !nothingKept) {
      if (!w) throw new Error(`Import: the record of row ${record.row} was neither written nor refused`);
      (w.updated ? updates : creates).push(w);
      continue;
    }
    for (const r of own) {
      if (failed.has(r)) continue;
      const message = !refused.length
        ? `Not imported: the import is all or nothing (atomic), and ${count(failed.size, 'other row has errors', 'other rows have errors')}`
        : r === record.row
          ? `Not imported: ${linesOf(refused)} (a record is imported whole, with its lines, or not at all)`
          : `Not imported: the record of row ${record.row}, which this row is a line of, has errors`;
      held.push({ row: r, message, held_back: true });
    }
  }
  const allErrors = [...errors, ...held].sort((a, b) => a.row - b.row);
  const entry = (w: WrittenRecord) => (dryRun ? { row: w.record.row } : { row: w.record.row, id: w.id });
  const byRow = (a: WrittenRecord, b: WrittenRecord) => a.record.row - b.record.row;
  const details = { creates: creates.sort(byRow).map(entry), updates: updates.sort(byRow).map(entry), errors: allErrors };
  const success = allErrors.length === 0;
  const message = messageOf({ dryRun, nothingKept, rows: rows.size, records: records.length, created: creates.length, updated: updates.length, failedRows: failed.size, own: errors.length, held: held.length });
  const summary = { total_records: records.length, created: dryRun ? 0 : creates.length, updated: dryRun ? 0 : updates.length, errors: allErrors.length };
  if (dryRun) return { message, summary: { ...summary, would_create: creates.length, would_update: updates.length }, details, success, valid: success, dry_run: true };
  return { message, summary, details, success };
}

/** "its line at row 4 has an error", "its lines at rows 4, 6 and 9 have errors". */
function linesOf(rows: readonly number[]): string {
  if (rows.length === 1) return `its line at row ${rows[0]} has an error`;
  const listed = rows.slice(0, LISTED_ROWS).join(', ');
  const more = rows.length > LISTED_ROWS ? ` and ${rows.length - LISTED_ROWS} more` : '';
  return `its lines at rows ${listed}${more} have errors`;
}

interface Counts {
  dryRun: boolean;
  nothingKept: boolean;
  rows: number;
  records: number;
  created: number;
  updated: number;
  /** Rows with errors of their own. */
  failedRows: number;
  /** Errors of the rows themselves, and rows held back because of them. */
  own: number;
  held: number;
}

/** The answer's sentence: what became of the rows, in rows and records, each count with its noun. */
function messageOf(c: Counts): string {
  const read = `${count(c.rows, 'row', 'rows')} (${count(c.records, 'record', 'records')})`;
  const errors = count(c.own, 'error', 'errors');
  if (c.nothingKept) {
    const others = c.held ? `; the other ${count(c.held, 'row', 'rows')} ${c.dryRun ? 'would be' : 'were'} held back` : '';
    return c.dryRun
      ? `Dry run of ${read}, atomic: nothing would be imported, ${errors} in ${count(c.failedRows, 'row', 'rows')}${others}; nothing was written`
      : `Nothing was imported (atomic import): ${errors} in ${count(c.failedRows, 'row', 'rows')}${others}`;
  }
  const notImported = c.failedRows + c.held;
  const why = c.held ? `${errors}, ${count(c.held, 'row', 'rows')} held back with ${c.own === 1 ? 'it' : 'them'}` : errors;
  if (c.dryRun) {
    const refused = notImported ? `, ${count(notImported, 'row', 'rows')} would not be imported (${why})` : '';
    return `Dry run of ${read}: ${c.created} would be created, ${c.updated} updated${refused}; nothing was written`;
  }
  const refused = notImported ? `, ${count(notImported, 'row', 'rows')} not imported (${why})` : '';
  return `Imported ${read}: ${c.created} created, ${c.updated} updated${refused}`;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}
