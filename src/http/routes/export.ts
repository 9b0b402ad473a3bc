/**
 * `POST /api/export/{model}` (spec §4.7, CONTRACTS C3 Export): the records named by the flat
 * body (`ids`, or `filter_str`/`name_search` minus `exclude_ids`, or every visible record) as an
 * XLSX file, streamed while its rows are read. Everything that can be refused is checked first,
 * so a refusal is an ordinary JSON error; once the headers are out, a failure cuts the stream
 * (the client sees a broken download, never a silently short file).
 */
import type { FastifyInstance } from 'fastify';
import { prepareExport, writeExport, XLSX_CONTENT_TYPE } from '../../api/export/export-records.js';
import { XlsxStreamWriter } from '../../api/export/xlsx-stream-writer.js';
import { attachmentDisposition } from '../document-reply.js';
import { readOnlyWork } from '../request-context.js';

export interface ExportRoutesOptions {
  /** Most records a selection may cover (`FF_BULK_MAX`); exports are not bound by it (C1), only by one worksheet's rows. */
  bulkMax?: number;
}

export function registerExportRoutes(app: FastifyInstance, _options: ExportRoutesOptions = {}): void {
  app.post('/api/export/:model', async (req, reply) => {
    const { model } = req.params as { model: string };
    const prepared = await readOnlyWork(req, () => prepareExport(model, req.body, { acceptLanguage: req.headers['accept-language'] ?? null }));
    const xlsx = new XlsxStreamWriter({ sheetName: prepared.labels.modelLabel });
    // The rows are read as the stream is consumed, in the request's environment, after the answer has started.
    readOnlyWork(req, () => writeExport(prepared, xlsx)).catch((err: Error) => {
      // A client that hung up is no server fault; anything else is, and the stream is cut.
      if (reply.raw.destroyed) req.log.info({ err }, 'export stopped: the client went away');
      else req.log.error({ err }, 'export failed after its answer started; the stream is cut');
      xlsx.abort(err);
    });
    return reply
      .header('Content-Type', XLSX_CONTENT_TYPE)
      .header('Content-Disposition', attachmentDisposition(prepared.filename))
      .header('X-Content-Type-Options', 'nosniff')
      .send(xlsx.output);
  });
}
