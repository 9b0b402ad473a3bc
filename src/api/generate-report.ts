/**
 * Reports (CONTRACTS C1 "Reports"): the document of a `Report` for records of its model — what
 * `POST /api/generate_report` answers, and `/api/execute` when a method returns a report action.
 *
 * Two steps, so that no database work waits on the browser:
 * 1. `prepareReport`, in the request's unit of work: the records resolved like any selection
 *    (explicit ids the caller cannot see → 404 for the whole call), the `Report` row, the data the
 *    templates read for all records at once (`reports/report-data.ts`), then one HTML document
 *    and one file name per record, in the caller's language. For a method's report action this
 *    runs in the method's own transaction, so the document shows what the method wrote, and a
 *    report that cannot be printed (no Chromium for a `pdf`) rolls the method back.
 * 2. `renderReport`, after the unit of work: each HTML printed to PDF by the platform's browser
 *    (`pdf` reports), then one document answered as it is, or several as a ZIP.
 */
import { BadRequest, NotFound } from '../errors.js';
import { callerFormat } from '../i18n/locale.js';
import { withCallerLanguage } from '../i18n/translations.js';
import { currentEnv } from '../orm/env.js';
import { documentName, uniqueFileNames } from '../reports/document-names.js';
import type { PdfEngine } from '../reports/pdf-engine.js';
import { readReportData } from '../reports/report-data.js';
import { findReport, type ReportFormat } from '../reports/report-definition.js';
import { FORMAT_GLOBAL } from '../reports/report-filters.js';
import { loadTemplate, parseFilename } from '../reports/report-template.js';
import { zipDocuments } from '../reports/zip-documents.js';
import { resolveSelection, visibleIds, type Selection } from './selection.js';

/** Most records one report call prints: a thousand PDFs already take minutes of one browser. */
export const MAX_REPORT_RECORDS = 1000;

export interface ReportRequest {
  /** The report's qualified identifier (`sales.report_sale_order`). */
  readonly report: string;
  /** The model the caller means to print; must be the report's when given. */
  readonly model?: string;
  /** The records, as sent (`instance_ids`, or a report action's `ids`)… */
  readonly ids?: readonly number[];
  /** …or a selection object. */
  readonly selection?: Selection;
  /** An explicit language (the request context's `lang`). */
  readonly lang?: unknown;
  /** The request's `Accept-Language`. */
  readonly acceptLanguage?: string | null;
}

export interface PreparedDocument {
  /** File name without extension. */
  readonly name: string;
  readonly html: string;
}

export interface PreparedReport {
  readonly identifier: string;
  readonly name: string;
  readonly format: ReportFormat;
  readonly documents: readonly PreparedDocument[];
}

/** A document to answer with. */
export interface RenderedDocument {
  readonly filename: string;
  readonly contentType: string;
  readonly body: Buffer;
}

const CONTENT_TYPES: Record<ReportFormat | 'zip', string> = {
  pdf: 'application/pdf',
  html: 'text/html; charset=utf-8',
  zip: 'application/zip',
};

/** Step 1 (in the unit of work): the HTML and file name of each record's document. */
/** `options.max`: the most records a selection may match at all (`FF_BULK_MAX`), beyond which it is refused unresolved. */
export async function prepareReport(request: ReportRequest, pdf: PdfEngine, options: { max?: number } = {}): Promise<PreparedReport> {
  if (request.ids !== undefined && request.selection !== undefined) throw new BadRequest("Send 'instance_ids' or 'selection', not both");
  if (request.ids === undefined && request.selection === undefined) throw new BadRequest("Name the records to print: 'instance_ids' or 'selection'");
  const report = await findReport(request.report);
  if (request.model !== undefined && request.model !== report.model) {
    throw new BadRequest(`Report '${report.identifier}' prints ${report.model} records, not ${request.model.slice(0, 80)}`);
  }
  const meta = currentEnv().registry.meta(report.model);
  // Before any work: without a browser a PDF cannot be made, whatever the records.
  if (report.format === 'pdf') pdf.assertAvailable();
  let ids: number[];
  if (request.selection !== undefined) {
    // An explicit empty list names no record, as `instance_ids: []` does: the request's own fault.
    if ('ids' in request.selection && !request.selection.ids.length) throw new BadRequest("'selection.ids' names no records: nothing to print");
    ids = await resolveSelection(meta, request.selection, { max: options.max });
    if (!ids.length) throw new NotFound(`No ${meta.name} record matches the selection: nothing to print`);
  } else {
    if (!request.ids!.length) throw new BadRequest("'instance_ids' names no records: nothing to print");
    ids = await visibleIds(meta, request.ids!, options.max);
  }
  if (ids.length > MAX_REPORT_RECORDS) {
    throw new BadRequest(`A report prints at most ${MAX_REPORT_RECORDS} records per call; this one names ${ids.length}: print fewer at a time`);
  }
  const body = await loadTemplate(report.moduleDir, report.template, report.identifier);
  const filename = await parseFilename(report.filename ?? report.name, report.identifier);

  return withCallerLanguage({ lang: request.lang, acceptLanguage: request.acceptLanguage ?? null }, async () => {
    const format = await callerFormat();
    const scopes = await readReportData(meta, ids, [...body.variables, ...filename.variables]);
    const globals = { [FORMAT_GLOBAL]: format };
    const documents: PreparedDocument[] = [];
    for (const scope of scopes) {
      const values = { ...scope, lang: format.code, dir: format.direction };
      const html = await body.liquid.render(body.templates, values, { globals }) as string;
      const name = await filename.liquid.render(filename.templates, values, { globals }) as string;
      documents.push({ name: documentName(name, report.name), html });
    }
    return { identifier: report.identifier, name: report.name, format: report.format, documents };
  });
}

/** Step 2 (after the unit of work): the document of one record, or a ZIP of one per record. */
export async function renderReport(prepared: PreparedReport, pdf: PdfEngine): Promise<RenderedDocument> {
  const { format, documents } = prepared;
  // All at once: the engine's page pool bounds how many the browser prints together.
  const bodies = format === 'pdf'
    ? await Promise.all(documents.map((d) => pdf.print(d.html)))
    : documents.map((d) => Buffer.from(d.html, 'utf8'));
  const names = uniqueFileNames(documents.map((d) => d.name), format);
  if (documents.length === 1) return { filename: names[0]!, contentType: CONTENT_TYPES[format], body: bodies[0]! };
  const zip = await zipDocuments(names.map((name, i) => ({ name, body: bodies[i]!, compress: format === 'html' })));
  return { filename: `${documentName(prepared.name, 'report')}.zip`, contentType: CONTENT_TYPES.zip, body: zip };
}
