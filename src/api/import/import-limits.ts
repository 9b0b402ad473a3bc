/**
 * The bounds of what one import or import preview reads (issue 25): columns per row and text per
 * record, the same for a CSV or XLSX preview and for the import's JSON rows. A person maps each
 * column by hand, so a thousand columns is already far beyond a real spreadsheet export; a record
 * of more than 1 MiB of text is a file cut wrong (a quote never closed) or built to exhaust the
 * server. Refusals name the bound, so the person knows what to change.
 */
import { BadRequest } from '../../errors.js';

/** Most columns a row may have. */
export const MAX_COLUMNS = 1_000;
/** Most text one record may hold, in characters (UTF-16 units, about bytes for most text). */
export const MAX_RECORD_CHARS = 1024 * 1024;

const COLUMNS_TEXT = MAX_COLUMNS.toLocaleString('en-US');

/** `where`: what has too many columns ("The CSV file", "'fields'"). */
export function tooManyColumns(where: string): BadRequest {
  return new BadRequest(`${where} has more than ${COLUMNS_TEXT} columns: an import takes at most ${COLUMNS_TEXT} columns`);
}

/** `where`: the record ("A record of the CSV file (line 2)", "'data' row 3"). */
export function recordTooLarge(where: string): BadRequest {
  return new BadRequest(`${where} holds more than 1 MiB of text: an import takes at most 1 MiB per record`);
}
