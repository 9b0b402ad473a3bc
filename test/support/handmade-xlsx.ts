/**
 * Hand-made XLSX workbooks for import tests: the parts written by yazl in any order and generated
 * as they stream, so a test can build a workbook of any shape or size (shared strings before or
 * after the sheet, a row as wide or a cell as long as wanted).
 */
import { Readable } from 'node:stream';
import yazl from 'yazl';

export const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
export const STYLES = `<?xml version="1.0"?><styleSheet ${NS}><fonts count="1"><font/></fonts><fills count="1"><fill/></fills>`
  + '<borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs>'
  + '<cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>';
export const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/**
 * A hand-made XLSX (yazl), its parts in the order given — so a workbook can hold its shared
 * strings before the sheet (LibreOffice's order) or after it, and a sheet can be generated row by
 * row, as large as wanted.
 */
export function handmadeWorkbook(options: {
  order: readonly ('workbook' | 'styles' | 'strings' | 'sheet')[];
  sheetRows: () => AsyncIterable<string>;
  strings: () => AsyncIterable<string>;
  date1904?: boolean;
}): AsyncIterable<Buffer> {
  const zip = new yazl.ZipFile();
  const fromLines = (head: string, lines: () => AsyncIterable<string>, tail: string) => Readable.from((async function* () {
    yield Buffer.from(head);
    let batch = '';
    for await (const line of lines()) {
      batch += line;
      if (batch.length > 32_768) {
        yield Buffer.from(batch);
        batch = '';
      }
    }
    yield Buffer.from(batch + tail);
  })());
  for (const part of options.order) {
    if (part === 'workbook') {
      zip.addBuffer(Buffer.from(`<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
        + '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
        + '</Relationships>'), 'xl/_rels/workbook.xml.rels');
      zip.addBuffer(Buffer.from(`<?xml version="1.0"?><workbook ${NS} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">`
        + `<workbookPr date1904="${options.date1904 ? 1 : 0}"/><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>`), 'xl/workbook.xml');
    } else if (part === 'styles') {
      zip.addBuffer(Buffer.from(STYLES), 'xl/styles.xml');
    } else if (part === 'strings') {
      zip.addReadStream(fromLines(`<?xml version="1.0"?><sst ${NS}>`, options.strings, '</sst>'), 'xl/sharedStrings.xml');
    } else {
      zip.addReadStream(fromLines(`<?xml version="1.0"?><worksheet ${NS}><sheetData>`, options.sheetRows, '</sheetData></worksheet>'), 'xl/worksheets/sheet1.xml');
    }
  }
  zip.end();
  return zip.outputStream as unknown as AsyncIterable<Buffer>;
}

export async function collect(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of source) chunks.push(c);
  return Buffer.concat(chunks);
}
