/**
 * Numbers typed in the user's language: `1 234,5` in French is 1234.5. Accepts the language's
 * separators and a plain `.` decimal point (what a keypad or a paste gives), nothing else.
 */
import { languageFormat } from '../format.js';

/**
 * The number a text means; `null` for an empty text, `undefined` when it is not a number.
 * @param {string} text @param {string | null} lang @param {{integer?: boolean}} [options]
 * @returns {number | null | undefined}
 */
export function parseNumberText(text, lang, { integer = false } = {}) {
  const format = languageFormat(lang);
  let plain = text.replace(/[\s\u00a0\u202f\u2067\u2069]/g, '');
  if (!plain) return null;
  const decimal = format.decimal_separator || '.';
  const group = (format.thousands_separator || '').replace(/[\s\u00a0\u202f]/g, '');
  if (group && group !== decimal) plain = plain.split(group).join('');
  if (decimal !== '.') {
    if (plain.includes(decimal)) plain = plain.replace(decimal, '.');
  }
  plain = plain.replace(/^\u2212/, '-');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)$/.test(plain)) return undefined;
  const n = Number(plain);
  if (!Number.isFinite(n)) return undefined;
  if (integer && !Number.isInteger(n)) return undefined;
  return n;
}

/**
 * A number as an input shows it for editing: the language's decimal separator, no grouping.
 * @param {number | null | undefined} n @param {string | null} lang @param {number} [digits]
 */
export function editableNumber(n, lang, digits) {
  if (n === null || n === undefined || Number.isNaN(n)) return '';
  const decimal = languageFormat(lang).decimal_separator || '.';
  const text = digits === undefined ? String(n) : trimZeros(n.toFixed(Math.min(digits, 10)), digits);
  return decimal === '.' ? text : text.replace('.', decimal);
}

/** Keeps at least 2 decimals of a fixed text (0.0024 stays, 120.000000 becomes 120.00). @param {string} text @param {number} digits */
function trimZeros(text, digits) {
  if (!text.includes('.') || digits <= 2) return text;
  return text.replace(/0+$/, '').replace(/\.(\d?)$/, (_, d) => `.${(d + '00').slice(0, 2)}`);
}
