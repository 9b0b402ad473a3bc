/**
 * The first rows of an XLSX upload's first worksheet, read by exceljs's streaming WorkbookReader
 * as the bytes arrive, parsing no more than needed.
 *
 * Left to itself the reader parks every worksheet met before the shared-strings table (which
 * Excel and exceljs write AFTER the sheets) in a temporary file, reads the whole upload and only
 * then parses — all of it, however many rows. Four hooks on the reader (exceljs 4.4.0, pinned)
 * make it stream instead:
 *
 * - `sharedStrings` is preset to a table answering `{sharedString: index}` for any index, so a
 *   sheet is parsed as it arrives, its text cells left as references;
 * - the first worksheet's XML is fed to the parser until `maxRows` rows are read, then read on
 *   unparsed (inflated and dropped); later worksheets are not parsed at all;
 * - the shared-strings table keeps only the referenced entries and stops being parsed after the
 *   last one (a table met before the sheet is kept whole, up to a bound);
 * - styles are kept aside, and a number whose style's format is a date one becomes an ISO date
 *   (`YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM:SS` with a time; spreadsheets hold no time zone).
 *
 * Cells come out as strings, numbers, booleans or null; a formula gives its cached result, rich
 * text its plain text, an error cell null. Wholly blank rows are skipped. A file that is not a
 * readable workbook, or holds no worksheet, is a 400.
 *
 * Bounds (`import-limits.ts`, issue 25): a row with a value beyond column 1,000, or more than
 * 1 MiB of text, is refused; so is a row whose XML passes 4 MiB before it ends (a 60 MB cell is
 * refused there, not held whole), and a shared-strings table whose text the preview would have to
 * hold or read past 32 MiB (a bomb of millions of strings before the sheet). The XML is fed to
 * the parser in event-loop turns of about 10 ms, so other requests are answered meanwhile.
 */
import { Readable } from 'node:stream';
import { BadRequest } from '../../errors.js';
import { EventLoopTurns } from '../import/event-loop-turns.js';
import { MAX_COLUMNS, MAX_RECORD_CHARS, recordTooLarge, tooManyColumns } from '../import/import-limits.js';
import type { Cell } from './csv-preview.js';
import { until, type UploadChunks } from './upload-chunks.js';

/** Characters of shared strings kept when the table comes before the sheet (~32 MiB of text). */
const MAX_CACHED_CHARS = 16 * 1024 * 1024;
/** Shared strings kept when the table comes before the sheet. */
const MAX_CACHED_STRINGS = 1_000_000;
/** Bytes of shared-strings XML parsed, at most. */
const MAX_STRINGS_XML_BYTES = 32 * 1024 * 1024;
/** Bytes of worksheet XML one row may take (1 MiB of text, escaped, and its cells' markup). */
const MAX_ROW_XML_BYTES = 4 * 1024 * 1024;

interface StyleModel {
  numFmt?: string;
  /** Set by the placeholder styles the sheet is parsed with. */
  styleId?: number;
}
interface Styles {
  getStyleModel(id: number): StyleModel | null | undefined;
}
interface ReaderCell {
  value: unknown;
  style?: StyleModel;
}
interface ReaderRow {
  eachCell(callback: (cell: ReaderCell, col: number) => void): void;
}
type WorksheetEvent = { eventType: 'worksheet'; value: AsyncIterable<ReaderRow> };

/** The parts of exceljs 4.4.0's WorkbookReader these hooks use (not in its type declarations). */
interface WorkbookReaderInternals {
  sharedStrings?: unknown;
  workbookRels?: { Id: string; Target: string }[];
  model?: { sheets?: { rId: string }[] };
  properties?: { model?: { date1904?: boolean } };
  styles: Styles;
  parse(): AsyncGenerator<unknown>;
  _parseWorksheet(iterator: AsyncIterable<unknown>, sheetNo: string): Generator<WorksheetEvent>;
  _parseSharedStrings(entry: Readable): AsyncGenerator<{ index: number; text: unknown }>;
  _parseStyles(entry: unknown): Promise<void>;
}

interface SharedRef {
  sharedString: number;
}

export async function previewXlsx(chunks: UploadChunks, maxRows: number): Promise<Cell[][]> {
  // Loaded on the first XLSX preview: exceljs adds about 24 MiB to a process that never reads one.
  const { default: ExcelJS } = await import('exceljs');
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from(chunks), {
    worksheets: 'emit', sharedStrings: 'emit', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore',
  }) as unknown as WorkbookReaderInternals;

  const rows: ReaderCell[][] = [];
  let sheetTaken = false;
  const needed = new Set<number>();
  const strings = new Map<number, string>();
  let cachedChars = 0;
  let styles: Styles | null = null;
  const turns = new EventLoopTurns();
  /** Worksheet XML fed to the parser since the last row it gave. */
  let sinceRow = 0;

  reader.sharedStrings = new Proxy([], {
    get: (target, key) => (typeof key === 'string' && /^\d+$/.test(key) ? { sharedString: Number(key) } : Reflect.get(target, key)),
  });
  // Set so that a sheet met before the workbook's relationships and sheet list is parsed, not
  // parked (or failed on); the real ones replace them when they come.
  reader.workbookRels ??= [];
  reader.model ??= { sheets: [] };
  const parseWorksheet = reader._parseWorksheet;
  reader._parseWorksheet = function* (iterator, sheetNo) {
    if (sheetTaken || !isFirstSheet(reader, sheetNo)) return; // the entry is then drained unparsed
    sheetTaken = true;
    const fed = metered(until(iterator as AsyncIterable<Buffer>, () => rows.length >= maxRows), turns, (bytes) => {
      sinceRow += bytes;
      if (sinceRow > MAX_ROW_XML_BYTES) throw recordTooLarge(`A row of the worksheet (over ${MAX_ROW_XML_BYTES / 2 ** 20} MiB of XML)`);
    });
    yield* parseWorksheet.call(reader, fed, sheetNo);
  };
  const parseSharedStrings = reader._parseSharedStrings;
  reader._parseSharedStrings = async function* (entry) {
    const keepAll = !sheetTaken;
    const last = () => (needed.size ? Math.max(...needed) : -1);
    let seen = -1;
    let parsed = 0;
    const limited = Readable.from(metered(until(entry, () => !keepAll && seen >= last()), turns, (bytes) => {
      parsed += bytes;
      if (parsed > MAX_STRINGS_XML_BYTES) throw tooMuchText();
    }));
    for await (const { index, text } of parseSharedStrings.call(reader, limited)) {
      seen = index;
      if (!keepAll && !needed.has(index)) continue;
      const plain = plainText(text);
      cachedChars += plain.length;
      // Before the sheet every string may be needed: past the bound, the preview would hold too much.
      if (keepAll && (cachedChars > MAX_CACHED_CHARS || strings.size >= MAX_CACHED_STRINGS)) throw tooMuchText();
      strings.set(index, plain);
    }
  };
  const parseStyles = reader._parseStyles;
  reader._parseStyles = async function (entry) {
    // The sheet keeps seeing the placeholder styles: numbers stay numbers, their style id kept.
    const placeholder = reader.styles;
    await parseStyles.call(reader, entry);
    styles = reader.styles;
    reader.styles = placeholder;
  };
  reader.styles = { getStyleModel: (id: number) => ({ styleId: id }) };

  try {
    for await (const event of reader.parse()) {
      if (!isWorksheetEvent(event)) continue;
      for await (const row of event.value) {
        sinceRow = 0;
        if (rows.length >= maxRows) continue;
        const cells: ReaderCell[] = [];
        let wide = false;
        row.eachCell((cell, col) => {
          if (col > MAX_COLUMNS) wide = true;
          cells[col - 1] = cell;
          const ref = cell.value as SharedRef | null;
          if (ref && typeof ref === 'object' && 'sharedString' in ref) needed.add(ref.sharedString);
        });
        if (wide) throw tooManyColumns('The worksheet');
        if (cells.some((c) => c && toCell(c, null, null, false) !== null)) rows.push(cells);
      }
    }
  } catch (err) {
    if (err instanceof BadRequest) throw err;
    throw new BadRequest(`The file is not a readable XLSX workbook: ${(err as Error).message.slice(0, 200)}`);
  }
  if (!sheetTaken) throw new BadRequest('The file is not an XLSX workbook with a worksheet');
  const date1904 = reader.properties?.model?.date1904 === true;
  const out = rows.map((cells) => Array.from(cells, (c) => (c ? toCell(c, strings, styles, date1904) : null)));
  for (const row of out) {
    if (row.reduce<number>((n, c) => n + (typeof c === 'string' ? c.length : 0), 0) > MAX_RECORD_CHARS) throw recordTooLarge('A row of the worksheet');
  }
  return out;
}

/** `source` passed on chunk by chunk, each counted by `count` (which may refuse it), in bounded event-loop turns. */
async function* metered(source: AsyncIterable<Buffer>, turns: EventLoopTurns, count: (bytes: number) => void): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    count(chunk.length);
    if (turns.due()) await turns.next();
    yield chunk;
  }
}

function tooMuchText(): BadRequest {
  return new BadRequest(`The workbook holds too much text to be previewed (its shared strings pass ${MAX_STRINGS_XML_BYTES / 2 ** 20} MiB, or hold more than the preview keeps before its first sheet): save the sheet as CSV to import it`);
}

/** Whether worksheet file `sheetNo` is the workbook's first sheet; true while the workbook's parts are unknown. */
function isFirstSheet(reader: WorkbookReaderInternals, sheetNo: string): boolean {
  const first = reader.model?.sheets?.[0];
  const rel = first && reader.workbookRels?.find((r) => r.Id === first.rId);
  return !rel || rel.Target.replace(/^\/?(xl\/)?/, '') === `worksheets/sheet${sheetNo}.xml`;
}

function isWorksheetEvent(event: unknown): event is WorksheetEvent {
  return typeof event === 'object' && event !== null && (event as { eventType?: unknown }).eventType === 'worksheet';
}

function plainText(text: unknown): string {
  if (typeof text === 'string') return text;
  const rich = (text as { richText?: { text?: string | null }[] } | null)?.richText;
  return rich ? rich.map((r) => r.text ?? '').join('') : '';
}

/**
 * A reader cell as a preview cell. `strings` null: only whether it is blank matters (a shared
 * string counts as text).
 */
function toCell(cell: ReaderCell, strings: Map<number, string> | null, styles: Styles | null, date1904: boolean): Cell {
  let value = cell.value;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const v = value as Record<string, unknown>;
    if ('sharedString' in v) return strings ? (strings.get(v.sharedString as number) ?? null) : '';
    if ('richText' in v) value = plainText(v);
    else if ('formula' in v || 'sharedFormula' in v) value = v.result ?? null;
    else if ('text' in v) value = v.text;
    else value = null; // an error cell (#N/A, #DIV/0!)
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    const id = cell.style?.styleId;
    const format = id !== undefined ? styles?.getStyleModel(id)?.numFmt : undefined;
    return format && isDateFormat(format) ? isoDate(value, date1904) : value;
  }
  if (value instanceof Date) return isoFromDate(value);
  if (typeof value === 'string') return value === '' ? null : value;
  if (typeof value === 'boolean') return value;
  return null;
}

/** A number format showing a date or time (quoted text and `[…]` sections such as colours aside). */
function isDateFormat(format: string): boolean {
  return /[ymdhs]/i.test(format.replace(/\[[^\]]*]/g, '').replace(/"[^"]*"/g, ''));
}

/** A spreadsheet serial day number as an ISO date (Excel's 1900 or 1904 date system). */
function isoDate(serial: number, date1904: boolean): string {
  const ms = Math.round((serial - 25569 + (date1904 ? 1462 : 0)) * 86_400_000);
  return isoFromDate(new Date(ms));
}

function isoFromDate(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19);
}
