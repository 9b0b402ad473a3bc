/**
 * The generic model API (spec §4.2–4.4, §4.6, §4.7): query, fetch, create, update, delete,
 * execute, name_search and get_registry for every model. Handlers parse the request, call the
 * model service (`src/api/`) in the request's unit of work and shape the answer.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callMethod, type MethodOutcome } from '../../api/call-method.js';
import { prepareReport, renderReport } from '../../api/generate-report.js';
import { describeModel } from '../../api/describe-model.js';
import { describeModelInfo } from '../../api/model-info.js';
import { fetchRecord, MAX_LIMIT, nameSearch, queryRecords } from '../../api/record-reads.js';
import { createRecord, deleteRecord, updateRecord } from '../../api/record-writes.js';
import { DEFAULT_BULK_MAX, parseSelection } from '../../api/selection.js';
import { currentEnv } from '../../orm/env.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import { PdfEngine } from '../../reports/pdf-engine.js';
import { sendDocument } from '../document-reply.js';
import { IN_UNIT_OF_WORK, readOnlyWork, unitOfWork } from '../request-context.js';
import { RequestBody, recordId } from './request-body.js';

type Params = { model: string; id?: string; method?: string };

export interface ModelApiOptions {
  /** Most records a selection or bulk call may cover (`FF_BULK_MAX`). */
  bulkMax?: number;
  /** Prints the PDF of a method's report action (the platform's; a private one, never started unless used, by default). */
  pdf?: PdfEngine;
}

function modelOf(req: FastifyRequest): ModelMeta {
  return currentEnv().registry.meta((req.params as Params).model);
}

/** `X-Action-Close` / `X-Action-Reload` of an outcome, each absent unless a result asked for it. */
export function actionHeaders(reply: FastifyReply, outcome: Pick<MethodOutcome, 'close' | 'reload'>): void {
  if (outcome.close) void reply.header('X-Action-Close', '1');
  if (outcome.reload) void reply.header('X-Action-Reload', '1');
}

export function registerModelApi(app: FastifyInstance, options: ModelApiOptions = {}): void {
  const bulkMax = options.bulkMax ?? DEFAULT_BULK_MAX;
  const pdf = options.pdf ?? new PdfEngine();

  app.post('/api/query/:model', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => {
    const body = new RequestBody(req.body);
    return queryRecords(modelOf(req), {
      fields: body.strings('fields'),
      filter_str: body.string('filter_str'),
      order_by: body.strings('order_by'),
      limit: body.integer('limit', 1, MAX_LIMIT),
      page: body.integer('page', 1, 1_000_000),
      group_fields: body.strings('group_fields'),
      name_search: body.strings('name_search'),
      counter: body.boolean('counter'),
      footer_aggregates: body.strings('footer_aggregates'),
    });
  }));

  app.post('/api/fetch/:model/:id', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () =>
    fetchRecord(modelOf(req), recordId((req.params as Params).id!), new RequestBody(req.body).strings('fields'))));

  app.post('/api/create/:model', IN_UNIT_OF_WORK, (req) => unitOfWork(req, () => createRecord(modelOf(req), req.body)));

  app.put('/api/update/:model/:id', IN_UNIT_OF_WORK, (req) => unitOfWork(req, () =>
    updateRecord(modelOf(req), recordId((req.params as Params).id!), req.body)));

  app.delete('/api/delete/:model/:id', IN_UNIT_OF_WORK, (req) => unitOfWork(req, () =>
    deleteRecord(modelOf(req), recordId((req.params as Params).id!))));

  app.post('/api/execute/:model/:method', IN_UNIT_OF_WORK, async (req, reply) => {
    const { outcome, report } = await unitOfWork(req, async () => {
      const body = new RequestBody(req.body);
      const requestBody = new RequestBody(body.object('request_body'));
      const context = requestBody.object('context');
      const acceptLanguage = req.headers['accept-language'] ?? null;
      const outcome = await callMethod(modelOf(req), (req.params as Params).method!, {
        ids: body.ids('ids'),
        selection: body.has('selection') ? parseSelection(body.raw.selection) : undefined,
        inputs: requestBody.object('inputs'),
        context,
        acceptLanguage,
      }, { max: bulkMax });
      // A report action answers its document, prepared in the method's transaction: it shows what
      // the method wrote, and a report that cannot be made rolls the method back.
      const report = outcome.report
        ? await prepareReport({ report: outcome.report.report, ids: outcome.report.ids, lang: context?.lang, acceptLanguage }, pdf, { max: bulkMax })
        : null;
      return { outcome, report };
    });
    // Printed after the commit (no transaction waits on the browser); the headers only once it is made.
    const document = report ? await renderReport(report, pdf) : null;
    actionHeaders(reply, outcome);
    if (document) return sendDocument(reply, document);
    return { message: outcome.message, result: outcome.result };
  });

  app.post('/api/name_search/:model', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => {
    const body = new RequestBody(req.body);
    return nameSearch(modelOf(req), { term: body.string('term'), limit: body.integer('limit', 1, MAX_LIMIT), filter: body.string('filter') });
  }));

  app.get('/api/get_registry/:model', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () =>
    describeModel(modelOf(req), { acceptLanguage: req.headers['accept-language'] ?? null })));

  app.get('/api/model-info/:model', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () =>
    describeModelInfo(modelOf(req), { acceptLanguage: req.headers['accept-language'] ?? null })));
}
