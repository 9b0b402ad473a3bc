/**
 * The file of the rows an import refused, to fix and import again: the original header and
 * columns (so the same mapping applies), exactly the rows the answer names in its errors, and an
 * `Error` column saying what was wrong on each. The server names every row of a refused record
 * (a row held back by its record's or a line's error says so), so each refused record is whole,
 * and a row it did import is never in the file, even next to a refused one. Built in the browser
 * as CSV.
 */
import { writeCsv } from './csv.js';

/**
 * @typedef {import('./xlsx-reader.js').Cell} Cell
 * @typedef {{row: number, field?: string, message: string, held_back?: boolean}} RowError
 */

/**
 * Rows of the failed-rows file.
 * @param {{fileRows: Cell[][], hasHeader: boolean, data: unknown[][], errors: RowError[], columnOf?: (field: string) => string}} input
 *   `fileRows`: the file as read (header first when it has one); `data`: what was sent (row 0 the
 *   header, row k the file's k-th data row); `errors`: the answer's `details.errors`; `columnOf`:
 *   the file's header of a field path (messages name the column as the person sees it).
 * @returns {unknown[][]}
 */
export function failedRows({ fileRows, hasHeader, data, errors, columnOf = (field) => field }) {
  const body = hasHeader ? fileRows.slice(1) : fileRows;
  /** @type {Map<number, string[]>} messages by data row */
  const messages = new Map();
  for (const e of errors) {
    if (!Number.isInteger(e.row) || e.row < 1 || e.row >= data.length) continue;
    const text = e.field ? `${columnOf(e.field)}: ${e.message}` : e.message;
    messages.set(e.row, [...(messages.get(e.row) ?? []), text]);
  }
  const width = Math.max(0, ...fileRows.map((r) => r.length));
  /** @param {Cell[]} row */
  const padded = (row) => [...row, ...Array(Math.max(0, width - row.length)).fill('')];
  /** @type {unknown[][]} */
  const out = [];
  if (hasHeader) out.push([...padded(fileRows[0] ?? []), 'Error']);
  for (const k of [...messages.keys()].sort((a, b) => a - b)) out.push([...padded(body[k - 1] ?? []), messages.get(k)?.join('; ') ?? '']);
  return out;
}

/**
 * The failed-rows file as a CSV blob.
 * @param {Parameters<typeof failedRows>[0]} input
 */
export function failedRowsBlob(input) {
  return new Blob([writeCsv(failedRows(input))], { type: 'text/csv;charset=utf-8' });
}
