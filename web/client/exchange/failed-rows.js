/**
 * The file of the rows an import refused, to fix and import again: the original header and
 * columns (so the same mapping applies), each refused record whole — its row and its line rows
 * (rows whose leading cell is blank belong to the record above) — and an `Error` column saying
 * what was wrong on each row. Built in the browser as CSV.
 */
import { writeCsv } from './csv.js';

/**
 * @typedef {import('./xlsx-reader.js').Cell} Cell
 * @typedef {{row: number, field?: string, message: string}} RowError
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
  const blankLead = (/** @type {number} */ k) => {
    const cell = data[k]?.[0];
    return cell === '' || cell === null || cell === undefined;
  };
  /** @type {Map<number, string[]>} messages by data row */
  const messages = new Map();
  for (const e of errors) {
    if (!Number.isInteger(e.row) || e.row < 1 || e.row >= data.length) continue;
    const text = e.field ? `${columnOf(e.field)}: ${e.message}` : e.message;
    messages.set(e.row, [...(messages.get(e.row) ?? []), text]);
  }
  /** @type {Set<number>} data rows to write */
  const rows = new Set();
  for (const row of messages.keys()) {
    let start = row;
    while (start > 1 && blankLead(start)) start -= 1;
    let end = start + 1;
    while (end < data.length && blankLead(end)) end += 1;
    for (let k = start; k < end; k += 1) rows.add(k);
  }
  const width = Math.max(0, ...fileRows.map((r) => r.length));
  /** @param {Cell[]} row */
  const padded = (row) => [...row, ...Array(Math.max(0, width - row.length)).fill('')];
  /** @type {unknown[][]} */
  const out = [];
  if (hasHeader) out.push([...padded(fileRows[0] ?? []), 'Error']);
  for (const k of [...rows].sort((a, b) => a - b)) out.push([...padded(body[k - 1] ?? []), (messages.get(k) ?? []).join('; ')]);
  return out;
}

/**
 * The failed-rows file as a CSV blob.
 * @param {Parameters<typeof failedRows>[0]} input
 */
export function failedRowsBlob(input) {
  return new Blob([writeCsv(failedRows(input))], { type: 'text/csv;charset=utf-8' });
}
