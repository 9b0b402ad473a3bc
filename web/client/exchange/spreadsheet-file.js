/**
 * The whole of an uploaded spreadsheet, read in the browser: the import route takes the rows as
 * JSON (spec §4.8), while the preview route answers only the first 20. CSV is decoded as UTF-8;
 * XLSX goes through `xlsx-reader.js`. Wholly empty rows are left out, as the server's preview
 * leaves them out; the dialog checks that both read the same header and first rows before using
 * these.
 */
import { parseCsv } from './csv.js';
import { readXlsxRows } from './xlsx-reader.js';

/** @typedef {import('./xlsx-reader.js').Cell} Cell */

/** @param {File} file */
export function isXlsx(file) {
  return /\.xlsx$/i.test(file.name) || file.type === 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
}

/** @param {Cell} cell */
const blank = (cell) => cell === '' || cell === null || cell === undefined;

/**
 * A CSV file's text: UTF-8, else Windows-1252 (what spreadsheet programs write as "CSV" on
 * Western Windows systems) — the server's preview decides the same way.
 * @param {ArrayBuffer} bytes
 */
function decodeText(bytes) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

/**
 * @param {File} file
 * @returns {Promise<Cell[][]>}
 */
export async function readSpreadsheet(file) {
  const rows = isXlsx(file) ? await readXlsxRows(await file.arrayBuffer()) : parseCsv(decodeText(await file.arrayBuffer()));
  return rows.filter((row) => !row.every(blank));
}

/**
 * Whether the browser's reading agrees with the server's preview (header and first rows, compared
 * as text): a file both sides read differently is never imported from the browser's reading.
 * @param {Cell[][]} rows what the browser read (header first when there is one)
 * @param {{headers: string[], rows: unknown[][]}} preview
 * @param {boolean} hasHeader
 */
export function agreesWithPreview(rows, preview, hasHeader) {
  const text = (/** @type {unknown} */ v) => sameDateText((v === null || v === undefined ? '' : String(v)).trim());
  const width = preview.headers.length;
  /** @param {unknown[]} a @param {unknown[]} b */
  const same = (a, b) => Array.from({ length: width }, (_, i) => i).every((i) => text(a[i]) === text(b[i]));
  const body = hasHeader ? rows.slice(1) : rows;
  if (hasHeader && !same(rows[0] ?? [], preview.headers)) return false;
  return preview.rows.every((row, i) => body[i] !== undefined && same(body[i], row));
}

/**
 * A timestamp as the browser's reader writes a date cell (`2030-01-15T00:00:00.000Z` →
 * `2030-01-15`, with a time → `2030-01-15T09:30:00`), other text unchanged.
 * @param {string} text
 */
function sameDateText(text) {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z?$/.exec(text);
  if (!m) return text;
  return m[2] === '00:00:00' ? m[1] : `${m[1]}T${m[2]}`;
}
