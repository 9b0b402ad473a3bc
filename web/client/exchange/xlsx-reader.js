/**
 * Reads the first worksheet of an XLSX file in the browser with no library: the file is a zip
 * (its central directory read here, entries inflated by the browser's own
 * `DecompressionStream('deflate-raw')`), its parts XML (read with `DOMParser`). Cells come out as
 * the spreadsheet typed them: text, numbers, booleans, and dates (cells whose number format is a
 * date format) as ISO text `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS` (as the server's preview
 * writes them; spreadsheets hold no time zone).
 *
 * Only what import needs: no formulas are evaluated (their cached value is read), no styles
 * beyond recognising dates, no Zip64 (spreadsheets over 4 GiB are not uploaded from a browser).
 */

/** @typedef {string | number | boolean} Cell */

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
/** Built-in number formats that show a date or a time (ECMA-376 §18.8.30). */
const BUILTIN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);
const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';

/**
 * The zip's entries by name, each read (inflated) on demand.
 * @param {ArrayBuffer} buffer
 * @returns {Map<string, () => Promise<string>>}
 */
function zipEntries(buffer) {
  const view = new DataView(buffer);
  let eocd = -1;
  for (let at = buffer.byteLength - 22; at >= Math.max(0, buffer.byteLength - 22 - 65_535); at -= 1) {
    if (view.getUint32(at, true) === EOCD_SIGNATURE) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new Error('This file is not an XLSX workbook (no zip directory found).');
  const count = view.getUint16(eocd + 10, true);
  let at = view.getUint32(eocd + 16, true);
  const names = new TextDecoder();
  /** @type {Map<string, () => Promise<string>>} */
  const entries = new Map();
  for (let i = 0; i < count; i += 1) {
    if (view.getUint32(at, true) !== CENTRAL_SIGNATURE) throw new Error('The XLSX file is damaged (bad zip directory).');
    const method = view.getUint16(at + 10, true);
    const size = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const name = names.decode(new Uint8Array(buffer, at + 46, nameLength));
    entries.set(name, async () => {
      if (view.getUint32(local, true) !== LOCAL_SIGNATURE) throw new Error('The XLSX file is damaged (bad zip entry).');
      const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
      const bytes = new Uint8Array(buffer, start, size);
      if (method === 0) return new TextDecoder().decode(bytes);
      if (method !== 8) throw new Error(`The XLSX file uses an unsupported compression (${method}).`);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
      return new Response(stream).text();
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** @param {string} text */
function xml(text) {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  if (doc.getElementsByTagName('parsererror').length) throw new Error('The XLSX file holds malformed XML.');
  return doc;
}

/** Elements by local name in the spreadsheet namespace. @param {Document | Element} node @param {string} name */
const tags = (node, name) => [...node.getElementsByTagNameNS(MAIN_NS, name)];

/** The text of a string item (`<si>`, `<is>`): its `<t>`s, rich-text runs included, phonetic runs excluded. @param {Element} item */
function stringItem(item) {
  return tags(item, 't')
    .filter((t) => /** @type {Element} */ (t.parentElement).localName !== 'rPh')
    .map((t) => t.textContent ?? '')
    .join('');
}

/** Whether a custom number format shows a date: d, m, y, h or s outside quotes and brackets. @param {string} code */
function isDateFormat(code) {
  const bare = code.replace(/"[^"]*"|\[[^\]]*\]|\\./g, '');
  return /[dmyhs]/i.test(bare) && !/^[#0.,%\s]*$/.test(bare);
}

/**
 * The style indexes (`s` of a cell) whose number format is a date.
 * @param {Document | null} styles
 */
function dateStyles(styles) {
  /** @type {Set<number>} */
  const out = new Set();
  if (!styles) return out;
  /** @type {Set<number>} */
  const dateFormats = new Set(BUILTIN_DATE_FORMATS);
  for (const format of tags(styles, 'numFmt')) {
    if (isDateFormat(format.getAttribute('formatCode') ?? '')) dateFormats.add(Number(format.getAttribute('numFmtId')));
  }
  const cellXfs = tags(styles, 'cellXfs')[0];
  if (!cellXfs) return out;
  tags(cellXfs, 'xf').forEach((xf, index) => {
    if (dateFormats.has(Number(xf.getAttribute('numFmtId') ?? 0))) out.add(index);
  });
  return out;
}

/**
 * A spreadsheet serial (days since 1899-12-30, or since 1904-01-01 in the 1904 date system) as ISO text.
 * @param {number} serial @param {boolean} [date1904]
 */
export function serialToIso(serial, date1904 = false) {
  const ms = Math.round((serial - 25_569 + (date1904 ? 1462 : 0)) * 86_400_000);
  const iso = new Date(ms).toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19);
}

/** Column index of a cell reference (`C7` → 2). @param {string} ref */
function columnOf(ref) {
  let n = 0;
  for (const ch of ref) {
    const code = ch.charCodeAt(0);
    if (code < 65 || code > 90) break;
    n = n * 26 + (code - 64);
  }
  return n - 1;
}

/**
 * The path of the workbook's first sheet, from the workbook and its relationships.
 * @param {Map<string, () => Promise<string>>} entries
 * @returns {Promise<string>}
 */
async function firstSheetPath(entries) {
  const workbook = entries.get('xl/workbook.xml');
  const rels = entries.get('xl/_rels/workbook.xml.rels');
  if (workbook && rels) {
    const sheet = tags(xml(await workbook()), 'sheet')[0];
    const relId = sheet?.getAttributeNS('http://schemas.openxmlformats.org/officeDocument/2006/relationships', 'id');
    const rel = [...xml(await rels()).getElementsByTagName('Relationship')].find((r) => r.getAttribute('Id') === relId);
    const target = rel?.getAttribute('Target');
    if (target) return target.startsWith('/') ? target.slice(1) : `xl/${target}`;
  }
  if (entries.has('xl/worksheets/sheet1.xml')) return 'xl/worksheets/sheet1.xml';
  throw new Error('The XLSX file has no worksheet.');
}

/**
 * Every row of the workbook's first sheet, as cells (missing cells are empty text).
 * @param {ArrayBuffer} buffer
 * @returns {Promise<Cell[][]>}
 */
export async function readXlsxRows(buffer) {
  const entries = zipEntries(buffer);
  const sheetEntry = entries.get(await firstSheetPath(entries));
  if (!sheetEntry) throw new Error('The XLSX file has no worksheet.');
  const sharedEntry = entries.get('xl/sharedStrings.xml');
  const stylesEntry = entries.get('xl/styles.xml');
  const [sheetText, sharedText, stylesText] = await Promise.all([sheetEntry(), sharedEntry?.(), stylesEntry?.()]);
  const shared = sharedText ? tags(xml(sharedText), 'si').map(stringItem) : [];
  const dates = dateStyles(stylesText ? xml(stylesText) : null);
  const workbookText = await entries.get('xl/workbook.xml')?.();
  const workbookPr = workbookText ? tags(xml(workbookText), 'workbookPr')[0] : undefined;
  const date1904 = ['1', 'true'].includes(workbookPr?.getAttribute('date1904') ?? '');
  /** @type {Cell[][]} */
  const rows = [];
  for (const rowNode of tags(xml(sheetText), 'row')) {
    /** @type {Cell[]} */
    const row = [];
    let next = 0;
    for (const c of tags(rowNode, 'c')) {
      const ref = c.getAttribute('r');
      const column = ref ? columnOf(ref) : next;
      next = column + 1;
      const type = c.getAttribute('t') ?? 'n';
      const raw = tags(c, 'v')[0]?.textContent ?? null;
      /** @type {Cell} */
      let value = '';
      if (type === 'inlineStr') value = tags(c, 'is')[0] ? stringItem(tags(c, 'is')[0]) : '';
      else if (raw === null) value = '';
      else if (type === 's') value = shared[Number(raw)] ?? '';
      else if (type === 'b') value = raw === '1';
      else if (type === 'str' || type === 'e' || type === 'd') value = raw;
      else {
        const number = Number(raw);
        value = dates.has(Number(c.getAttribute('s') ?? -1)) ? serialToIso(number, date1904) : number;
      }
      while (row.length < column) row.push('');
      row[column] = value;
    }
    rows.push(row);
  }
  return rows;
}
