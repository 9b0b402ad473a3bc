/**
 * `POST /api/generate_report {model, report_id, instance_ids | selection, context?}` (CONTRACTS
 * C1 "Reports"): one matching record → the document itself, several → a ZIP of one document per
 * record. The records are read in the request's unit of work; the PDFs are printed after it, so
 * no database connection waits on the browser.
 */
import type { FastifyInstance } from 'fastify';
import { prepareReport, renderReport } from '../../api/generate-report.js';
import { parseSelection, DEFAULT_BULK_MAX } from '../../api/selection.js';
import { BadRequest } from '../../errors.js';
import type { PdfEngine } from '../../reports/pdf-engine.js';
import { sendDocument } from '../document-reply.js';
import { IN_UNIT_OF_WORK, readOnlyWork } from '../request-context.js';
import { RequestBody } from './request-body.js';

export interface ReportRouteOptions {
  /** Most records a selection may match (`FF_BULK_MAX`). */
  bulkMax?: number;
}

export function registerReportRoutes(app: FastifyInstance, pdf: PdfEngine, options: ReportRouteOptions = {}): void {
  app.post('/api/generate_report', IN_UNIT_OF_WORK, async (req, reply) => {
    const prepared = await readOnlyWork(req, () => {
      const body = new RequestBody(req.body);
      const report = body.string('report_id');
      const model = body.string('model');
      if (!report) throw new BadRequest("'report_id' is required: the report's identifier, e.g. sales.report_sale_order");
      if (!model) throw new BadRequest("'model' is required: the model of the records to print");
      const context = body.object('context');
      return prepareReport({
        report,
        model,
        ids: body.ids('instance_ids'),
        selection: body.has('selection') ? parseSelection(body.raw.selection) : undefined,
        lang: context?.lang,
        acceptLanguage: req.headers['accept-language'] ?? null,
      }, pdf, { max: options.bulkMax ?? DEFAULT_BULK_MAX });
    });
    return sendDocument(reply, await renderReport(prepared, pdf));
  });
}
