/**
 * CSV as spreadsheets write it (RFC 4180): fields separated by a comma, a semicolon or a tab (the
 * first lines tell which, as the server's preview decides), quoted with `"` when they hold a separator, a quote or a line break,
 * a quote inside doubled. Reading keeps every cell as text; the server converts per field.
 */

/** @typedef {string[][]} Rows */

const SEPARATORS = [',', ';', '\t'];

/** Lines looked at to choose the separator. */
const SAMPLE_LINES = 10;

/**
 * The separator of a CSV text, chosen as the server's preview chooses it (so both read the same
 * columns): the candidate occurring the same number of times, outside quotes, on each of the
 * first lines (the most frequent of those on the first line), else the most frequent on the
 * first line; `,` when none occurs.
 * @param {string} text
 */
export function csvSeparator(text) {
  /** @type {number[][]} */
  const lines = [];
  let counts = SEPARATORS.map(() => 0);
  let quoted = false;
  let ended = true;
  for (let i = 0; i < text.length && lines.length < SAMPLE_LINES; i += 1) {
    const ch = text[i];
    ended = false;
    if (ch === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i += 1;
      if (counts.some((n) => n > 0) || lines.length) lines.push(counts);
      counts = SEPARATORS.map(() => 0);
      ended = true;
    } else {
      const k = SEPARATORS.indexOf(ch);
      if (k >= 0) counts[k] += 1;
    }
  }
  if (!ended && lines.length < SAMPLE_LINES) lines.push(counts);
  if (!lines.length) return ',';
  const first = lines[0];
  const consistent = SEPARATORS.map((_, k) => first[k] > 0 && lines.every((l) => l[k] === first[k]));
  const pool = SEPARATORS.map((_, k) => k).filter((k) => !consistent.some(Boolean) || consistent[k]);
  const best = pool.reduce((a, b) => (first[b] > first[a] ? b : a));
  return first[best] > 0 ? SEPARATORS[best] : ',';
}

/**
 * Every row of a CSV text (a leading byte-order mark dropped, blank trailing lines too).
 * @param {string} text
 * @returns {Rows}
 */
export function parseCsv(text) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const sep = csvSeparator(text);
  /** @type {Rows} */
  const rows = [];
  /** @type {string[]} */
  let row = [];
  let cell = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        cell += ch;
      }
      i += 1;
      continue;
    }
    if (ch === '"' && cell === '') {
      quoted = true;
    } else if (ch === sep) {
      row.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      if (ch === '\r' && text[i + 1] === '\n') i += 1;
    } else {
      cell += ch;
    }
    i += 1;
  }
  if (cell !== '' || row.length) {
    row.push(cell);
    rows.push(row);
  }
  while (rows.length && rows[rows.length - 1].every((c) => c === '')) rows.pop();
  return rows;
}

/**
 * A CSV text of rows (comma-separated, CRLF line ends, quoted where needed), with a byte-order
 * mark so spreadsheet programs read it as UTF-8.
 * @param {unknown[][]} rows
 */
export function writeCsv(rows) {
  /** @param {unknown} value */
  const cell = (value) => {
    const text = value === null || value === undefined ? '' : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return `\ufeff${rows.map((r) => r.map(cell).join(',')).join('\r\n')}\r\n`;
}
