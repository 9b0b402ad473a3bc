/**
 * The first rows of an uploaded spreadsheet, whatever its format: XLSX (`xlsx-preview.ts`) or
 * CSV (`csv-preview.ts`). The format is the file name's extension — `.xlsx`/`.xlsm`, or
 * `.csv`/`.tsv`/`.txt` — checked against the first bytes (a workbook is a ZIP archive, a CSV has
 * no NUL bytes); a name without extension is decided by the bytes alone. The client's content
 * type is not consulted (browsers send `application/vnd.ms-excel` for CSV files). Whatever was
 * not parsed is read to the end and dropped, so the request's later parts can still be read.
 */
import { extname } from 'node:path';
import type { Readable } from 'node:stream';
import { BadRequest } from '../../errors.js';
import { previewCsv, type Cell } from './csv-preview.js';
import { UploadChunks } from './upload-chunks.js';
import { previewXlsx } from './xlsx-preview.js';

const ZIP = Buffer.from('PK\x03\x04', 'latin1');
const OLE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0]);
const SNIFF_BYTES = 4096;

export async function readSheet(file: Readable, filename: string, maxRows: number): Promise<Cell[][]> {
  const chunks = new UploadChunks(file);
  try {
    const format = formatOf(await chunks.peek(SNIFF_BYTES), filename);
    return format === 'xlsx' ? await previewXlsx(chunks, maxRows) : await previewCsv(chunks, maxRows);
  } finally {
    await chunks.drain();
  }
}

function formatOf(head: Buffer, filename: string): 'xlsx' | 'csv' {
  const ext = extname(filename).toLowerCase();
  const zip = head.subarray(0, 4).equals(ZIP);
  const ole = head.subarray(0, 4).equals(OLE);
  const text = !zip && !ole && !head.includes(0);
  if (!head.length) throw new BadRequest('The file is empty');
  if (ext === '.xlsx' || ext === '.xlsm') {
    if (!zip) throw new BadRequest(`'${filename.slice(0, 80)}' is not an XLSX workbook (damaged, or another format under that name)`);
    return 'xlsx';
  }
  if (ext === '.csv' || ext === '.tsv' || ext === '.txt') {
    if (!text) throw new BadRequest(`'${filename.slice(0, 80)}' is not a CSV text file`);
    return 'csv';
  }
  if (ext === '.xls' || (ext === '' && ole)) throw new BadRequest('Old Excel files (.xls) cannot be read: save the sheet as .xlsx or .csv');
  if (ext === '' && zip) return 'xlsx';
  if (ext === '' && text) return 'csv';
  throw new BadRequest(`Unknown file format${ext ? ` '${ext.slice(0, 20)}'` : ''}: send an .xlsx or a .csv file`);
}
