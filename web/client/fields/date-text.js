/**
 * Dates typed in the user's language format (`24/11/2026` in French, `11/24/2026` in English):
 * the order of day, month and year comes from the language's `date_format`, so a person types
 * dates the way the rest of the client shows them. Any non-digit separates the parts.
 */
import { formatDate, languageFormat } from '../format.js';

/** @param {string | null} lang @returns {('Y' | 'M' | 'D')[]} */
function partOrder(lang) {
  const pattern = (languageFormat(lang).date_format || 'DD/MM/YYYY').replace(/\[[^\]]*\]/g, '');
  /** @type {('Y' | 'M' | 'D')[]} */
  const order = [];
  for (const m of pattern.matchAll(/Y+|M+|D+/g)) {
    const letter = /** @type {'Y' | 'M' | 'D'} */ (m[0][0]);
    if (!order.includes(letter)) order.push(letter);
  }
  return order.length === 3 ? order : ['D', 'M', 'Y'];
}

/**
 * How a date is typed in this language, for a placeholder (`DD/MM/YYYY`).
 * @param {string | null} lang
 */
export function datePlaceholder(lang) {
  return (languageFormat(lang).date_format || 'DD/MM/YYYY').replace(/\[([^\]]*)\]/g, '$1');
}

/**
 * `YYYY-MM-DD` of a typed date; `null` for an empty text, `undefined` when it is no date.
 * ISO (`2026-11-24`) is accepted in every language.
 * @param {string} text @param {string | null} lang
 * @returns {string | null | undefined}
 */
export function parseDateText(text, lang) {
  const trimmed = text.replace(/[\u2067\u2069]/g, '').trim();
  if (!trimmed) return null;
  const iso = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(trimmed);
  const parts = iso ? [iso[1], iso[2], iso[3]] : trimmed.split(/\D+/).filter(Boolean);
  if (parts.length !== 3) return undefined;
  const order = iso ? ['Y', 'M', 'D'] : partOrder(lang);
  /** @type {Record<string, number>} */
  const got = {};
  order.forEach((letter, i) => { got[letter] = Number(parts[i]); });
  let year = got.Y;
  if (year < 100) year += 2000;
  const { M: month, D: day } = got;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || year > 9999) return undefined;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** A stored date as the input shows it. @param {string | null | undefined} iso @param {string | null} lang */
export function editableDate(iso, lang) {
  return iso ? formatDate(iso, lang).replace(/[\u2067\u2069]/g, '') : '';
}
