/**
 * The rows of `data` read into records (CONTRACTS C3): a row whose first cell is not blank starts a
 * record; a row whose first cell is blank and that gives a line column a value is a OneToMany line
 * of the record above (a record's first line may sit on its own row). Cells are converted in memory
 * (`cell-values.ts`); relation cells are kept as texts for the batch's resolver. A cell that cannot
 * be read is an error of its own row naming the column and the value; rows left wholly blank are
 * skipped (they are no input row).
 *
 * A row with a blank first cell and no line value is no line of anything: most often a record whose
 * first cell was forgotten. It is an error of its own row and leaves the record above alone (as
 * Odoo reads such a row as a record of its own), rather than failing a record it adds nothing to.
 */
import { showValue, type Field } from '../../orm/fields/field.js';
import { ManyToManyField, type OneToManyField } from '../../orm/fields/relational-fields.js';
import { CellError, cellText, cellValue, columnOf, isBlank, type DateFormat } from './cell-values.js';
import { EventLoopTurns } from './event-loop-turns.js';
import type { ImportColumns, ValueColumn } from './import-columns.js';
import type { Cell } from './import-request.js';

/** One entry of `details.errors`. */
export interface RowError {
  row: number;
  field?: string;
  message: string;
  /** The row itself is fine: it was not imported because of errors elsewhere (its record, a line of it, an atomic import). */
  held_back?: true;
}

/** A relation cell waiting for its batch's resolver; `holder[field]` gets the id(s). */
export interface RelationCell {
  readonly column: ValueColumn;
  readonly row: number;
  readonly holder: Record<string, unknown>;
  readonly texts: readonly string[];
  readonly cell: Cell;
}

export interface ImportLine {
  readonly row: number;
  readonly vals: Record<string, unknown>;
}

export interface ImportedRecord {
  /** The record's row in `data`. */
  readonly row: number;
  /** Values by field name, as a create body gives them (relations once resolved). */
  readonly vals: Record<string, unknown>;
  /** Fields whose cell is blank: an update clears them. */
  readonly blank: Field[];
  readonly lines: Map<OneToManyField, ImportLine[]>;
  /** The rows after `row` that are lines of this record (each ends as this record does). */
  readonly lineRows: number[];
  readonly relations: RelationCell[];
  readonly errors: RowError[];
  /** The `identifier` cell, when given. */
  readonly identifier: string | null;
  /** The `id` cell, when given (`NaN` when it is no id). */
  readonly dbId: number | null;
}

export interface ReadRows {
  readonly records: ImportedRecord[];
  /** Errors of rows that belong to no record (a line before any record, a blank first cell and no line value). */
  readonly orphanErrors: RowError[];
}

/** Reads every row, in event-loop turns of about 10 ms (an import may hold 100,000 rows). */
export async function readRows(data: readonly (readonly Cell[])[], columns: ImportColumns, dateFormat: DateFormat | null): Promise<ReadRows> {
  const turns = new EventLoopTurns();
  const records: ImportedRecord[] = [];
  const orphanErrors: RowError[] = [];
  let current: ImportedRecord | null = null;
  const topColumns = [...columns.record.map((c) => c.index), ...(columns.idColumn === null ? [] : [columns.idColumn])];
  for (let r = 1; r < data.length; r++) {
    if (turns.due()) await turns.next();
    const row = data[r]!;
    if (row.every((c) => isBlank(c))) continue;
    if (!isBlank(row[0])) {
      current = newRecord(r, row, columns, dateFormat);
      records.push(current);
    } else if (!columns.lines.some((l) => l.columns.some((c) => !isBlank(row[c.index])))) {
      orphanErrors.push(noLineError(r, columns));
      continue;
    } else if (!current) {
      orphanErrors.push({ row: r, message: 'This row has a blank first cell, so it is a line of the record above, but no record comes before it' });
      continue;
    } else {
      current.lineRows.push(r);
      const given = topColumns.find((i) => !isBlank(row[i]));
      if (given !== undefined) {
        current.errors.push({
          row: r, field: pathAt(columns, given),
          message: `This row has a blank first cell, so it is a line of the record above, but it gives the record's column '${pathAt(columns, given)}' a value`,
        });
      }
    }
    for (const { field, columns: lineColumns } of columns.lines) {
      if (lineColumns.every((c) => isBlank(row[c.index]))) continue;
      const vals: Record<string, unknown> = {};
      for (const c of lineColumns) readCell(c, row[c.index] ?? null, r, vals, current, dateFormat);
      const lines = current.lines.get(field) ?? current.lines.set(field, []).get(field)!;
      lines.push({ row: r, vals });
    }
  }
  return { records, orphanErrors };
}

function newRecord(r: number, row: readonly Cell[], columns: ImportColumns, dateFormat: DateFormat | null): ImportedRecord {
  const identifierCell = columns.identifierColumn === null ? null : row[columns.identifierColumn];
  const idCell = columns.idColumn === null ? null : row[columns.idColumn];
  const record: ImportedRecord = {
    row: r, vals: {}, blank: [], lines: new Map(), lineRows: [], relations: [], errors: [],
    identifier: isBlank(identifierCell) ? null : cellText(identifierCell!),
    dbId: isBlank(idCell) ? null : /^\d+$/.test(cellText(idCell!)) ? Number(cellText(idCell!)) : NaN,
  };
  for (const c of columns.record) {
    const cell = row[c.index] ?? null;
    if (isBlank(cell)) record.blank.push(c.field);
    else readCell(c, cell, r, record.vals, record, dateFormat);
  }
  return record;
}

/** Reads a non-blank cell into `vals` (or a relation cell to resolve); errors go to `record`. */
function readCell(c: ValueColumn, cell: Cell, r: number, vals: Record<string, unknown>, record: ImportedRecord, dateFormat: DateFormat | null): void {
  if (isBlank(cell)) return;
  if (c.lookup) {
    const text = cellText(cell);
    const texts = c.field instanceof ManyToManyField ? [...new Set(text.split(',').map((t) => t.trim()).filter(Boolean))] : [text];
    record.relations.push({ column: c, row: r, holder: vals, texts, cell });
    return;
  }
  try {
    const value = cellValue(c.field, cell, dateFormat);
    columnOf(c.field, value); // validated now, converted again by the write
    vals[c.field.name] = value;
  } catch (err) {
    if (!(err instanceof CellError)) throw err;
    record.errors.push(cellError(r, c.path, cell, err.message));
  }
}

export function cellError(row: number, path: string, cell: Cell, reason: string): RowError {
  return { row, field: path, message: `Column '${path}', value ${showValue(cell)}: ${reason}` };
}

/** The error of a row whose first cell is blank and which gives no line column a value. */
function noLineError(r: number, columns: ImportColumns): RowError {
  const first = columns.record.find((c) => c.index === 0)?.path ?? (columns.idColumn === 0 ? 'id' : null);
  const named = first === null ? 'first column' : `first column ('${first}')`;
  return {
    row: r, ...(first === null ? {} : { field: first }),
    message: `This row's ${named} is blank, so it is no record of its own, and it gives no line column a value, so it is no line of the record above either: fill in its ${named} to import it`,
  };
}

function pathAt(columns: ImportColumns, index: number): string {
  if (index === columns.idColumn) return 'id';
  return columns.record.find((c) => c.index === index)!.path;
}
