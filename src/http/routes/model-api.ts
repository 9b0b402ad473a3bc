/**
 * The generic model API (spec §4.2–4.4, §4.6, §4.7): query, fetch, create, update, delete,
 * execute, name_search and get_registry for every model. Handlers only parse the request, call
 * the ORM and shape the answer; the ORM does the work, in the request's unit of work.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertRight } from '../../access/record-access.js';
import { BadRequest, FieldForgeError, NotFound } from '../../errors.js';
import { currentEnv, withEnv } from '../../orm/env.js';
import type { RegistryEntry } from '../../orm/fields/field.js';
import type { ModelMeta } from '../../orm/model-meta.js';
import type { Model } from '../../orm/model.js';
import { QuerySet, type AggregateFunction } from '../../orm/queryset.js';
import { RecordBatch } from '../../orm/record-batch.js';
import { createRecords } from '../../orm/write/create-records.js';
import { deleteRecords } from '../../orm/write/delete-records.js';
import { writeRecords } from '../../orm/write/write-records.js';
import { publicValues } from '../../orm/write/write-values.js';
import { IN_UNIT_OF_WORK, readOnlyWork, unitOfWork } from '../request-context.js';
import { callerLanguage, translateRegistry, withCallerLanguage } from '../../i18n/translations.js';
import { RequestBody, recordId } from './request-body.js';

/** Default page size of a query, and the largest a client may ask for. */
export const DEFAULT_LIMIT = 80;
export const MAX_LIMIT = 2000;

type Params = { model: string; id?: string; method?: string };

function modelOf(req: FastifyRequest): ModelMeta {
  return currentEnv().registry.meta((req.params as Params).model);
}

/**
 * `{id, name, display_name}` of a written record. An update may leave its record out of the
 * writer's sight (a record rule or company it moved the record out of): the write was allowed
 * when it was made and stands, as in Odoo, and the answer gives the id without the names the
 * writer may no longer read.
 */
function writeAnswer(meta: ModelMeta, id: number, rec: Model | undefined): Record<string, unknown> {
  if (!rec) return { id, name: null, display_name: null };
  const name = meta.fields.get('name')?.column ? rec._values.name ?? null : rec.display_name;
  return { id: rec.id, name, display_name: rec.display_name };
}

export function registerModelApi(app: FastifyInstance): void {
  app.post('/api/query/:model', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, async () => {
    const meta = modelOf(req);
    const body = new RequestBody(req.body);
    const limit = body.integer('limit', 1, MAX_LIMIT) ?? DEFAULT_LIMIT;
    const page = body.integer('page', 1, 1_000_000) ?? 1;
    let qs = new QuerySet(meta).public_only();
    const filter = body.string('filter_str');
    if (filter !== undefined && filter.trim() !== '') qs = qs.filter(filter);
    const terms = body.strings('name_search');
    if (terms) qs = qs.search(terms.filter((t) => t.trim() !== ''));
    const order = body.strings('order_by');
    if (order?.length) qs = qs.order_by(...order);
    const footer = body.strings('footer_aggregates');
    const aggregates: Record<string, AggregateFunction> = Object.fromEntries((footer ?? []).map((f) => [f, 'sum']));
    const groupFields = body.strings('group_fields');
    const paged = qs.limit(limit).offset((page - 1) * limit);
    const data = groupFields?.length ? await paged.group(groupFields, aggregates) : await paged.read(body.strings('fields'));
    if (!body.boolean('counter') && footer === undefined) return data;
    const answer: Record<string, unknown> = { count: await qs.count(), data };
    if (footer !== undefined) answer.aggregates = await qs.aggregate(aggregates);
    return answer;
  }));

  app.post('/api/fetch/:model/:id', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, async () => {
    const meta = modelOf(req);
    const id = recordId((req.params as Params).id!);
    const body = new RequestBody(req.body);
    const [record] = await new QuerySet(meta).public_only().with_archived().filter({ id }).read(body.strings('fields'));
    if (!record) throw new NotFound(`${meta.name} ${id} does not exist`);
    return record;
  }));

  app.post('/api/create/:model', IN_UNIT_OF_WORK, (req) => unitOfWork(req, async () => {
    const meta = modelOf(req);
    const [rec] = await createRecords(meta, [publicValues(meta, req.body, 'create')]);
    return writeAnswer(meta, rec!.id, rec);
  }));

  app.put('/api/update/:model/:id', IN_UNIT_OF_WORK, (req) => unitOfWork(req, async () => {
    const meta = modelOf(req);
    const id = recordId((req.params as Params).id!);
    await writeRecords(meta, [id], publicValues(meta, req.body, 'update'));
    // Loaded as the writer: a record it may no longer read is not there (see writeAnswer).
    const [rec] = await RecordBatch.load(meta, [id]);
    return writeAnswer(meta, id, rec);
  }));

  app.delete('/api/delete/:model/:id', IN_UNIT_OF_WORK, (req) => unitOfWork(req, async () => {
    const meta = modelOf(req);
    const id = recordId((req.params as Params).id!);
    await deleteRecords(meta, [id]);
    return { id, deleted: true };
  }));

  app.post('/api/execute/:model/:method', IN_UNIT_OF_WORK, (req) => unitOfWork(req, async () => {
    const meta = modelOf(req);
    const method = (req.params as Params).method!;
    if (!meta.apiMethods.has(method)) throw new NotFound(`${meta.name} has no API method '${method.slice(0, 60)}'`);
    const body = new RequestBody(req.body);
    const ids = body.ids('ids');
    const requestBody = new RequestBody(body.object('request_body'));
    const inputs = requestBody.object('inputs') ?? {};
    const context = { ...(requestBody.object('context') ?? {}), active_model: meta.name } as Record<string, unknown>;
    // The method's `callerLanguage()`: context `lang`, the user's `lang`, `Accept-Language`, `en`.
    const language = { lang: context.lang, acceptLanguage: req.headers['accept-language'] ?? null };
    if (ids === undefined) {
      const fn = (meta.cls as any)[method];
      if (typeof fn !== 'function') throw new BadRequest(`${meta.name}.${method} is a record method: send 'ids'`);
      return { message: `${meta.name}.${method} executed`, result: (await withCallerLanguage(language, () => fn.call(meta.cls, inputs, context))) ?? null };
    }
    // Once per record: an id sent twice is one record, not a missing one.
    const unique = [...new Set(ids)];
    const records = await RecordBatch.load(meta, unique);
    if (records.length !== unique.length) throw new NotFound(`Some ${meta.name} records do not exist`);
    context.active_ids = unique;
    const fn = (meta.cls.prototype as any)[method];
    if (typeof fn !== 'function') throw new BadRequest(`${meta.name}.${method} is a model-level method: send no 'ids'`);
    const results: unknown[] = [];
    for (const rec of records) results.push((await withCallerLanguage(language, () => fn.call(rec, inputs, context))) ?? null);
    return { message: `${meta.name}.${method} executed on ${results.length} record(s)`, result: results.length === 1 ? results[0] : results };
  }));

  app.post('/api/name_search/:model', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, async () => {
    const meta = modelOf(req);
    const body = new RequestBody(req.body);
    let qs = new QuerySet(meta).public_only().limit(body.integer('limit', 1, MAX_LIMIT) ?? 8);
    const term = body.string('term') ?? '';
    if (term.trim()) qs = qs.search([term]);
    const filter = body.string('filter');
    if (filter?.trim()) qs = qs.filter(filter);
    return qs.read(['display_name']);
  }));

  app.get('/api/get_registry/:model', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, async () => {
    const meta = modelOf(req);
    assertRight(meta, 'read');
    const out: Record<string, RegistryEntry> = {};
    for (const [name, f] of meta.fields) if (!f.options.internal) out[name] = f.describe();
    // Each distinct `visible_setting` is evaluated once per request.
    const holds = new Map<string, boolean>();
    for (const entry of Object.values(out)) {
      const condition = entry.visible_setting;
      if (condition === undefined) continue;
      if (!holds.has(condition)) holds.set(condition, await settingHolds(condition));
      entry.visible_setting_holds = holds.get(condition)!;
    }
    // Labels in the caller's language (the user's `lang`, else `Accept-Language`; active ones only).
    return translateRegistry(meta.name, out, await callerLanguage({ acceptLanguage: req.headers['accept-language'] ?? null }));
  }));
}

/**
 * Whether the caller's current company's `Settings` record matches `condition`, read as the
 * platform: the settings decide what a form shows, whoever may read them. No company, no settings
 * record, or a condition that does not parse or resolve (a 400 of the declaration) → false: a
 * gated field stays hidden, as a record rule that does not parse matches nothing.
 */
async function settingHolds(condition: string): Promise<boolean> {
  const { companyId, registry } = currentEnv();
  if (companyId === null || !registry.has('Settings')) return false;
  try {
    return await withEnv({ su: true }, () =>
      new QuerySet(registry.meta('Settings')).filter({ company: companyId }).filter(condition).exists());
  } catch (err) {
    if (err instanceof FieldForgeError && err.status === 400) return false;
    throw err;
  }
}
