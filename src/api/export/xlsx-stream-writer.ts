/**
 * A streaming XLSX writer: one worksheet of inline strings (no shared-string table, which would
 * have to hold every distinct text until the end), numbers, booleans and dates, zipped as
 * it is written. Memory stays bounded by one chunk of XML and the zip's stream buffers whatever
 * the number of rows: `writeRow` waits while the consumer (the HTTP reply) is not reading, so a
 * slow client slows the database reads instead of filling the heap.
 *
 * Chosen over exceljs's streaming `WorkbookWriter` by measurement (docs/decisions.md, issue 13):
 * at 100,000 rows × 10 columns it is several times faster for a fraction of the memory. The zip
 * is `zip-stream.ts` (native CRC-32, one deflate stream).
 *
 * ```ts
 * const xlsx = new XlsxStreamWriter({ sheetName: 'Tasks' });
 * xlsx.output.pipe(reply.raw);
 * await xlsx.writeRow(['Name', 'Deadline'], { header: true });
 * await xlsx.writeRow(['Paint', xlsx.date('2026-03-01', xlsx.numberFormat('yyyy-mm-dd'))]);
 * await xlsx.end();
 * ```
 */
import type { Readable } from 'node:stream';
import { ZipStream } from './zip-stream.js';

/** A number shown with a number format (a date, an amount with its currency's decimals). */
export interface FormattedNumber {
  readonly value: number;
  /** Index of a cell format from `XlsxStreamWriter.numberFormat`. */
  readonly style: number;
}

export type XlsxCell = string | number | boolean | FormattedNumber | null | undefined;

/** Rows of one worksheet (Excel's limit, header included). */
export const XLSX_MAX_ROWS = 1_048_576;
/** Characters of one cell (Excel's limit); longer texts are cut. */
export const XLSX_MAX_CELL_TEXT = 32_767;
/** Columns of one worksheet (Excel's limit: XFD). */
export const XLSX_MAX_COLUMNS = 16_384;

/** XML text is flushed to the zip in chunks of about this size. */
const CHUNK_CHARS = 64 * 1024;
/** Milliseconds from the Unix epoch to Excel's day 0 (1899-12-30, which absorbs the 1900 leap-year bug). */
const EXCEL_EPOCH_MS = Date.UTC(1899, 11, 30);
/** Excel's dates start at 1900-03-01 (serial 61) once the fictitious 1900-02-29 is behind. */
const FIRST_EXACT_SERIAL = 61;
const DAY_MS = 86_400_000;

const SHEET_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
  + '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
  + 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">';

export interface XlsxWriterOptions {
  /** The worksheet's name (cut to Excel's 31 characters, characters Excel refuses replaced). */
  readonly sheetName: string;
  /** Deflate level of the worksheet (1 = fastest; the XML is so repetitive that 1 already shrinks it ~10×). */
  readonly compressionLevel?: number;
  /** File times (tests pin them). */
  readonly mtime?: Date;
}

export class XlsxStreamWriter {
  private readonly zip: ZipStream;
  private readonly numberFormats: string[] = [];
  private readonly sheetName: string;
  private readonly columnRefs: string[] = [];
  private pending = '';
  private rowCount = 0;
  private started = false;
  private ended = false;
  private failure: Error | null = null;

  constructor(options: XlsxWriterOptions) {
    this.zip = new ZipStream(options.mtime);
    this.sheetName = sheetNameOf(options.sheetName);
    // The parts known now first ([Content_Types].xml leading, as Office writes it); the styles
    // last, since number formats are added while rows stream.
    this.addWorkbookParts();
    this.zip.openEntry('xl/worksheets/sheet1.xml', options.compressionLevel ?? 1);
    this.output.on('error', (err: Error) => (this.failure ??= err));
    // A destination that goes away (a client hanging up) destroys the output: stop the writer,
    // which wakes a `writeRow` waiting for room, rather than leave it waiting forever.
    this.output.on('close', () => {
      if (this.ended) return;
      this.failure ??= new Error('The XLSX output was closed before the workbook was complete');
      this.zip.destroy(this.failure);
    });
  }

  /** The XLSX bytes, as they are produced: pipe them to the destination. */
  get output(): Readable {
    return this.zip.output;
  }

  /** Rows written so far (the header included). */
  get rows(): number {
    return this.rowCount;
  }

  /** A cell style for numbers shown with `format` (an Excel number format such as `#,##0.00` or `yyyy-mm-dd`). */
  numberFormat(format: string): number {
    let index = this.numberFormats.indexOf(format);
    if (index < 0) index = this.numberFormats.push(format) - 1;
    // Style 0 is the default, 1 the bold header; number formats follow.
    return index + 2;
  }

  /** A Date cell (`YYYY-MM-DD`) as a real Excel date; before 1900-03-01 Excel has none, so the text stays. */
  date(iso: string, style: number): XlsxCell {
    const ms = Date.parse(`${iso.slice(0, 10)}T00:00:00Z`);
    const serial = (ms - EXCEL_EPOCH_MS) / DAY_MS;
    return Number.isFinite(serial) && serial >= FIRST_EXACT_SERIAL ? { value: serial, style } : iso;
  }

  /** A Datetime cell (an ISO instant) as a real Excel date-time in UTC (Excel dates carry no zone). */
  datetime(iso: string, style: number): XlsxCell {
    const serial = (Date.parse(iso) - EXCEL_EPOCH_MS) / DAY_MS;
    return Number.isFinite(serial) && serial >= FIRST_EXACT_SERIAL ? { value: serial, style } : iso;
  }

  /**
   * Appends one row. Returns nothing while the row only joins the pending chunk, else a promise
   * that resolves once the output has room again (backpressure): a caller awaits it only then,
   * sparing a promise per row. `header` makes the row bold and frozen at the top (first row only).
   */
  writeRow(cells: readonly XlsxCell[], options: { header?: boolean } = {}): Promise<void> | undefined {
    if (this.failure) return Promise.reject(this.failure);
    if (this.rowCount >= XLSX_MAX_ROWS) return Promise.reject(new Error(`A worksheet holds at most ${XLSX_MAX_ROWS} rows`));
    if (!this.started) this.start(options.header === true);
    const r = ++this.rowCount;
    const bold = options.header === true && r === 1;
    let xml = `<row r="${r}">`;
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i];
      if (cell === null || cell === undefined || cell === '') continue;
      const ref = `${this.columnRef(i)}${r}`;
      if (typeof cell === 'string') {
        xml += `<c r="${ref}"${bold ? ' s="1"' : ''} t="inlineStr"><is><t xml:space="preserve">${escapeText(cell)}</t></is></c>`;
      } else if (typeof cell === 'number') {
        if (Number.isFinite(cell)) xml += `<c r="${ref}"><v>${cell}</v></c>`;
      } else if (typeof cell === 'boolean') {
        xml += `<c r="${ref}" t="b"><v>${cell ? 1 : 0}</v></c>`;
      } else if (Number.isFinite(cell.value)) {
        xml += `<c r="${ref}" s="${cell.style}"><v>${cell.value}</v></c>`;
      }
    }
    this.pending += `${xml}</row>`;
    return this.pending.length >= CHUNK_CHARS ? this.flush() : undefined;
  }

  /** Writes the rest of the workbook and resolves once the last byte has been handed to the output. */
  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.started) this.start(false);
    this.pending += '</sheetData></worksheet>';
    await this.flush();
    await this.zip.closeEntry();
    this.ended = true;
    this.add('xl/styles.xml', this.stylesXml());
    this.zip.finish();
  }

  /** Stops writing: the output fails, so a client never mistakes a cut file for a whole one. */
  abort(error: Error): void {
    this.failure ??= error;
    this.zip.destroy(error);
  }

  private start(frozenHeader: boolean): void {
    this.started = true;
    const view = frozenHeader
      ? '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>'
      : '';
    this.pending = `${SHEET_HEAD}${view}<sheetData>${this.pending}`;
  }

  private async flush(): Promise<void> {
    const chunk = this.pending;
    this.pending = '';
    if (!chunk) return;
    await this.zip.writeText(chunk);
    if (this.failure) throw this.failure;
  }

  private columnRef(index: number): string {
    let ref = this.columnRefs[index];
    if (ref === undefined) {
      ref = '';
      for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) ref = String.fromCharCode(65 + ((n - 1) % 26)) + ref;
      this.columnRefs[index] = ref;
    }
    return ref;
  }

  private add(name: string, xml: string): void {
    this.zip.addBuffer(name, Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${xml}`, 'utf8'));
  }

  /** The parts besides the worksheet and the styles. */
  private addWorkbookParts(): void {
    this.add('[Content_Types].xml', '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
      + '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
      + '<Default Extension="xml" ContentType="application/xml"/>'
      + '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
      + '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
      + '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
      + '</Types>');
    this.add('_rels/.rels', '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
      + '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
      + '</Relationships>');
    this.add('xl/workbook.xml', '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
      + 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
      + `<sheets><sheet name="${escapeText(this.sheetName)}" sheetId="1" r:id="rId1"/></sheets>`
      + '</workbook>');
    this.add('xl/_rels/workbook.xml.rels', '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
      + '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
      + '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>'
      + '</Relationships>');
  }

  private stylesXml(): string {
    // Custom number formats take ids from 164 (below are Excel's built-in ones).
    const numFmts = this.numberFormats.map((f, i) => `<numFmt numFmtId="${164 + i}" formatCode="${escapeText(f)}"/>`).join('');
    const xfs = this.numberFormats.map((_f, i) => `<xf numFmtId="${164 + i}" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>`).join('');
    return '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
      + (numFmts ? `<numFmts count="${this.numberFormats.length}">${numFmts}</numFmts>` : '')
      + '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
      + '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>'
      + '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
      + '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
      + `<cellXfs count="${2 + this.numberFormats.length}"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>`
      + `<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>${xfs}</cellXfs>`
      + '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
      + '</styleSheet>';
  }
}

/** XML text: markup characters escaped, characters XML 1.0 cannot carry dropped, cut to Excel's cell limit. */
function escapeText(text: string): string {
  const cut = text.length > XLSX_MAX_CELL_TEXT ? text.slice(0, XLSX_MAX_CELL_TEXT) : text;
  // eslint-disable-next-line no-control-regex
  return cut.replace(/[&<>"\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : ''));
}

/** Excel refuses `[]:*?/\` in sheet names, and names over 31 characters or blank. */
function sheetNameOf(name: string): string {
  const clean = name.replace(/[[\]:*?/\\]/g, ' ').trim().slice(0, 31).trim();
  return clean || 'Sheet1';
}
