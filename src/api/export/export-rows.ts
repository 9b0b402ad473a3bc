/**
 * The records of an export, read page by page so memory stays bounded whatever their number
 * (CONTRACTS C3), and laid out as spreadsheet rows.
 *
 * Pages: with a filter, keyset pages in id order (`id > last ORDER BY id LIMIT n`): each page is
 * one indexed range read whatever its depth, where OFFSET would rescan every earlier row. With
 * explicit `ids` (or an `order_by`, whose ordered ids are read first), pages of the ids in that order. Every page is an ordinary queryset read as
 * the caller (public fields only), so rights, record rules, company isolation and the archivable
 * default hold for each row and each related value. Pages run without a transaction (read-only
 * work), so each sees the data as of its own statement: a record written meanwhile appears in its
 * newest state, and none is read twice or skipped, since ids never change.
 */
import type { ModelMeta } from '../../orm/model-meta.js';
import { inCondition } from '../../orm/query/filter-ast.js';
import { QuerySet } from '../../orm/queryset.js';
import type { Serialized } from '../../orm/read/read-records.js';
import type { ExportCells } from './export-cells.js';
import type { ExportColumn } from './export-columns.js';
import type { XlsxCell } from './xlsx-stream-writer.js';

/** Records per page: large enough that per-statement costs vanish, small enough to stay a few MB. */
export const EXPORT_PAGE_SIZE = 1000;

/** Which records: explicit ids (checked visible beforehand), or a filtered queryset. */
export type ExportSource = { readonly ids: readonly number[] } | { readonly query: QuerySet };

/** The pages of records of `source`, read along `paths`. */
export async function* exportPages(meta: ModelMeta, source: ExportSource, paths: readonly string[], pageSize = EXPORT_PAGE_SIZE): AsyncGenerator<Serialized[]> {
  const fields = paths.length ? paths : ['id'];
  if ('ids' in source) {
    for (let at = 0; at < source.ids.length; at += pageSize) {
      const chunk = source.ids.slice(at, at + pageSize);
      // Archived records are reached, as by the single-record routes (C1).
      const rows = await new QuerySet(meta).public_only().with_archived().filter(inCondition(['id'], chunk)).read(fields);
      const byId = new Map(rows.map((r) => [r.id as number, r]));
      yield chunk.map((id) => byId.get(id)).filter((r): r is Serialized => r !== undefined);
    }
    return;
  }
  const page = (after: number) => source.query.filter({ id__gt: after }).order_by('id ASC').limit(pageSize).read(fields);
  let next = page(0);
  for (;;) {
    const rows = await next;
    if (!rows.length) return;
    const full = rows.length === pageSize;
    // The next page is read while this one is written out: the database and the writer work at
    // once, and at most two pages are held.
    if (full) {
      next = page(rows[rows.length - 1]!.id as number);
      // Awaited on the next turn; a consumer that stops early must not leave an unhandled rejection.
      next.catch(() => {});
    }
    yield rows;
    if (!full) return;
  }
}

/**
 * The rows of one record: its own cells and its first line on the first row, each further line
 * on a row of its own whose record cells are blank (lines of several to-many fields side by side).
 */
export function recordRows(record: Serialized, columns: readonly ExportColumn[], cells: ExportCells): XlsxCell[][] {
  let lineCount = 1;
  for (const column of columns) {
    if (!column.lines || !column.readable) continue;
    const lines = record[column.lines.name];
    if (Array.isArray(lines) && lines.length > lineCount) lineCount = lines.length;
  }
  const rows: XlsxCell[][] = [];
  for (let k = 0; k < lineCount; k++) {
    rows.push(columns.map((column) => {
      if (!column.lines) return k === 0 ? cells.cell(column, record, 0) : null;
      const line = (record[column.lines.name] as Serialized[] | undefined)?.[k];
      return line ? cells.cell(column, line, 1) : null;
    }));
  }
  return rows;
}
