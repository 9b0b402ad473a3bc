/**
 * What `POST /api/import-preview/{model}` answers (CONTRACTS C3) once the upload's first rows are
 * read (`read-sheet.ts`): `{headers, rows, suggested_fields}` — the header row (or, without one,
 * the columns' spreadsheet letters A, B, … AA), the first 20 data rows made rectangular (short
 * rows padded with null; trailing columns without header or value dropped) and, parallel to the
 * headers, the import path each suggests in the caller's language (`suggested-fields.ts`; all
 * null without a header row). The caller needs the read right on the model.
 */
import { assertRight } from '../../access/record-access.js';
import { BadRequest } from '../../errors.js';
import { callerLanguage } from '../../i18n/translations.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import type { Cell } from './csv-preview.js';
import { suggestFields } from './suggested-fields.js';

export type { Cell } from './csv-preview.js';

/** Data rows a preview shows. */
export const PREVIEW_ROWS = 20;

export interface ImportPreview {
  headers: string[];
  rows: Cell[][];
  suggested_fields: (string | null)[];
}

export async function importPreview(
  meta: ModelMeta, sheet: readonly Cell[][], hasHeader: boolean, language: { acceptLanguage?: string | null } = {},
): Promise<ImportPreview> {
  assertRight(meta, 'read');
  if (!sheet.length) throw new BadRequest('The file holds no rows');
  const headerRow = hasHeader ? sheet[0]! : [];
  const data = sheet.slice(hasHeader ? 1 : 0, (hasHeader ? 1 : 0) + PREVIEW_ROWS);
  let width = Math.max(headerRow.length, ...data.map((r) => r.length));
  while (width > 0 && blank(headerRow[width - 1]) && data.every((r) => blank(r[width - 1]))) width--;
  const headers = hasHeader
    ? Array.from({ length: width }, (_, i) => (blank(headerRow[i]) ? '' : String(headerRow[i]).trim()))
    : Array.from({ length: width }, (_, i) => columnLetters(i));
  const rows = data.map((r) => Array.from({ length: width }, (_, i) => r[i] ?? null));
  const suggested_fields = hasHeader
    ? await suggestFields(meta, headers, await callerLanguage({ acceptLanguage: language.acceptLanguage ?? null }))
    : headers.map(() => null);
  return { headers, rows, suggested_fields };
}

function blank(cell: Cell | undefined): boolean {
  return cell === undefined || cell === null || (typeof cell === 'string' && cell.trim() === '');
}

/** 0 → A, 25 → Z, 26 → AA. */
function columnLetters(index: number): string {
  let out = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) out = String.fromCharCode(65 + ((n - 1) % 26)) + out;
  return out;
}
