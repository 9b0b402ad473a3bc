/**
 * Spreadsheet export (`POST /api/export/{model}`, spec §4.7, CONTRACTS C3), in two steps so that
 * every refusal is an ordinary JSON error and the file is never held whole:
 *
 * 1. `prepareExport`: the body checked, the columns resolved, the records named (explicit ids the
 *    caller cannot see → 404 for the whole call; a filter compiled and counted → 400 when bad or
 *    when the rows would not fit one worksheet), the labels in the caller's language.
 * 2. `writeExport`: once the answer's headers are out, the rows streamed page by page into the
 *    XLSX writer, which waits whenever the client is not reading.
 */
import { assertRight } from '../../access/record-access.js';
import { BadRequest } from '../../errors.js';
import { callerLanguage } from '../../i18n/translations.js';
import { currentEnv } from '../../orm/env.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { QuerySet } from '../../orm/queryset.js';
import { visibleIds } from '../selection.js';
import { ExportCells } from './export-cells.js';
import { exportColumns, type ExportColumn } from './export-columns.js';
import { exportLabels, type ExportLabels } from './export-labels.js';
import { parseExportRequest, type ExportRequest } from './export-request.js';
import { exportPages, recordRows, type ExportSource } from './export-rows.js';
import { XLSX_MAX_ROWS, type XlsxStreamWriter } from './xlsx-stream-writer.js';

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export interface PreparedExport {
  readonly meta: ModelMeta;
  readonly request: ExportRequest;
  readonly columns: readonly ExportColumn[];
  readonly labels: ExportLabels;
  readonly source: ExportSource;
  /** `<Verbose name> <YYYY-MM-DD>.xlsx`, in the caller's language. */
  readonly filename: string;
}

export async function prepareExport(model: string, body: unknown, language: { acceptLanguage?: string | null } = {}): Promise<PreparedExport> {
  const meta = currentEnv().registry.meta(model);
  const request = parseExportRequest(body);
  assertRight(meta, 'read');
  const columns = exportColumns(meta, request.fields, request.import_compatible);
  const source = await exportSource(meta, request);
  const lang = await callerLanguage({ lang: request.lang, acceptLanguage: language.acceptLanguage ?? null });
  const labels = await exportLabels(meta, columns, request.import_compatible, lang);
  const filename = `${fileSafe(labels.modelLabel) || meta.name} ${new Date().toISOString().slice(0, 10)}.xlsx`;
  return { meta, request, columns, labels, source, filename };
}

/** Streams the header row and every record's rows into `xlsx`, then ends it. */
export async function writeExport(prepared: PreparedExport, xlsx: XlsxStreamWriter): Promise<void> {
  const { meta, columns, labels, source, request } = prepared;
  const cells = new ExportCells(xlsx, request.import_compatible, labels.choices);
  await xlsx.writeRow(labels.headers, { header: true });
  const paths = [...new Set(columns.flatMap((c) => c.readPaths))];
  for await (const page of exportPages(meta, source, paths)) {
    for (const record of page) {
      for (const row of recordRows(record, columns, cells)) {
        const room = xlsx.writeRow(row);
        if (room) await room;
      }
    }
  }
  await xlsx.end();
}

/** The records named by the request, checked before anything is sent (see the file comment). */
async function exportSource(meta: ModelMeta, request: ExportRequest): Promise<ExportSource> {
  const room = XLSX_MAX_ROWS - 1;
  const tooMany = (n: number) => new BadRequest(
    `An export holds at most ${room} records (one worksheet); this one has ${n}: narrow the filter or export in parts`);
  const ordered = request.order_by?.length ? request.order_by : null;
  if (request.ids !== undefined) {
    const ids = await visibleIds(meta, request.ids, Number.MAX_SAFE_INTEGER);
    if (ids.length > room) throw tooMany(ids.length);
    // Without an order the ids keep the order sent (C1); with one, they take it.
    if (!ordered || !ids.length) return { ids };
    return { ids: await new QuerySet(meta).public_only().with_archived().filter({ id__in: ids }).order_by(...ordered).ids() };
  }
  let query = new QuerySet(meta).public_only();
  if (request.filter_str !== undefined && request.filter_str.trim() !== '') query = query.filter(request.filter_str);
  if (request.name_search?.length) query = query.search(request.name_search);
  if (request.exclude_ids?.length) query = query.filter({ id__not_in: [...request.exclude_ids] });
  // Also compiles the filter: a bad one is a 400 now, not a cut file later.
  const count = await query.count();
  if (count > room) throw tooMany(count);
  // In another order than the ids': the ordered ids are read at once (one statement, 8 bytes a
  // record, where a keyset on arbitrary values — relations, NULLs, timestamps finer than
  // JavaScript's — could skip or repeat rows), then the records page by page in that order.
  // A bad entry is a 400 here, before the first byte.
  if (ordered) return { ids: await query.order_by(...ordered).ids() };
  return { query };
}

/** A file name part without path separators or control characters. */
function fileSafe(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f/\\]/g, ' ').trim().slice(0, 120);
}
