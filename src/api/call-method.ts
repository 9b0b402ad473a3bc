/**
 * Calling a model's API method (spec §4.6, CONTRACTS C1): only the names of `_api_methods`; once
 * without a record for a model-level (static) method, or once per record — the `ids` as sent, or
 * a selection resolved in its order — with `context.active_ids` and `context.active_model`. The
 * method's `callerLanguage()` is the context's `lang`, the user's, then `Accept-Language`.
 *
 * A method may answer with an action instead of a plain result: `{type: 'report', report, ids?}`
 * (the caller answers the rendered document), and any object result may carry `close: true` /
 * `reload: true` (the dialog that triggered it closes, the view behind refetches).
 *
 * A method with a wizard (`_wizards`) takes the wizard's values as `inputs`: they are checked
 * against its fields once, after the records are found and before the method runs (a 400 naming
 * the field, nothing run), and the method receives them converted (`wizard-inputs.ts`).
 */
import { BadRequest, NotFound } from '../errors.js';
import { withCallerLanguage } from '../i18n/translations.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { RecordBatch } from '../orm/record-batch.js';
import { methodRefusal } from '../orm/state-locks.js';
import { DEFAULT_BULK_MAX, resolveSelection, type ResolveOptions, type Selection } from './selection.js';
import { wizardInputs } from './wizard-inputs.js';

export interface MethodCall {
  /** Records to run on, as sent; with neither `ids` nor `selection` the method is model-level. */
  ids?: readonly number[];
  selection?: Selection;
  inputs?: Record<string, unknown>;
  context?: Record<string, unknown>;
  /** The request's `Accept-Language`, for `callerLanguage()`. */
  acceptLanguage?: string | null;
}

/** A report a method asked to answer with (`{type: 'report', report, ids?}`). */
export interface ReportAction {
  report: string;
  ids: number[];
}

export interface MethodOutcome {
  message: string;
  /** The single return value for one call; an array, in the records' order, for several (always with a selection). */
  result: unknown;
  /** Set when the answer is a document rather than JSON. */
  report: ReportAction | null;
  /** `X-Action-Close: 1`: a result asked the triggering dialog to close. */
  close: boolean;
  /** `X-Action-Reload: 1`: a result asked the view behind to refetch. */
  reload: boolean;
}

export async function callMethod(meta: ModelMeta, method: string, call: MethodCall, options: ResolveOptions = {}): Promise<MethodOutcome> {
  if (!meta.apiMethods.has(method)) throw new NotFound(`${meta.name} has no API method '${method.slice(0, 60)}'`);
  if (call.ids !== undefined && call.selection !== undefined) throw new BadRequest("Send 'ids' or 'selection', not both");
  let inputs = call.inputs ?? {};
  const wizard = meta.wizards.get(method);
  const context: Record<string, unknown> = { ...(call.context ?? {}), active_model: meta.name };
  const language = { lang: context.lang, acceptLanguage: call.acceptLanguage ?? null };

  if (call.ids === undefined && call.selection === undefined) {
    const fn = (meta.cls as unknown as Record<string, unknown>)[method];
    if (typeof fn !== 'function') throw new BadRequest(`${meta.name}.${method} is a record method: send 'ids' or a 'selection'`);
    if (wizard) inputs = await wizardInputs(wizard, inputs);
    const result = (await withCallerLanguage(language, () => Promise.resolve(fn.call(meta.cls, inputs, context)))) ?? null;
    return outcome(`${meta.name}.${method} executed`, [result], false, []);
  }
  const fn = (meta.cls.prototype as unknown as Record<string, unknown>)[method];
  if (typeof fn !== 'function') throw new BadRequest(`${meta.name}.${method} is a model-level method: send no 'ids' or 'selection'`);
  // Once per record: an id sent twice is one record, not a missing one. Explicit ids are loaded
  // at once (as the caller: a hidden one is missing); a selection is resolved first.
  const ids = call.selection ? await resolveSelection(meta, call.selection, options) : uniqueIds(meta, call.ids!, options.max);
  // A state lock refusing the method locks the records first (a concurrent Confirm is waited for):
  // they are loaded as it leaves them, and its refusal follows the 404 of a record the caller cannot see.
  const refusal = await methodRefusal(meta, method, ids);
  const records = await RecordBatch.load(meta, ids);
  if (records.length !== ids.length) {
    const found = new Set(records.map((r) => r.id));
    throw new NotFound(`${meta.name} ${ids.filter((id) => !found.has(id)).slice(0, 5).join(', ')} does not exist`);
  }
  context.active_ids = ids;
  if (refusal) throw refusal;
  if (wizard) inputs = await wizardInputs(wizard, inputs);
  const results: unknown[] = [];
  for (const record of records) {
    results.push((await withCallerLanguage(language, () => Promise.resolve(fn.call(record, inputs, context)))) ?? null);
  }
  return outcome(`${meta.name}.${method} executed on ${results.length} record(s)`, results, call.selection !== undefined, ids);
}

function uniqueIds(meta: ModelMeta, ids: readonly number[], max = DEFAULT_BULK_MAX): number[] {
  const unique = [...new Set(ids)];
  if (unique.length > max) throw new BadRequest(`At most ${max} ${meta.name} records per call (FF_BULK_MAX)`);
  return unique;
}

/**
 * The outcome of the results of one call: report actions (all of one report) become the document
 * of the union of their ids — each defaulting to its own record; `close`/`reload` hold when a
 * result asked for them.
 */
function outcome(message: string, results: unknown[], alwaysList: boolean, recordIds: readonly number[]): MethodOutcome {
  const objects = results.filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null && !Array.isArray(r));
  const close = objects.some((r) => r.close === true);
  const reload = objects.some((r) => r.reload === true);
  const reports = results.map((r, i) => reportAction(r, recordIds[i]));
  let report: ReportAction | null = null;
  if (results.length && reports.every((r) => r !== null)) {
    const names = new Set(reports.map((r) => r!.report));
    if (names.size === 1) report = { report: reports[0]!.report, ids: [...new Set(reports.flatMap((r) => r!.ids))] };
  }
  const result = alwaysList || results.length !== 1 ? results : results[0];
  return { message, result, report, close, reload };
}

/** A `{type: 'report', report, ids?}` result, its ids defaulting to the method's record. */
function reportAction(result: unknown, recordId: number | undefined): ReportAction | null {
  if (typeof result !== 'object' || result === null || (result as { type?: unknown }).type !== 'report') return null;
  const { report, ids } = result as { report?: unknown; ids?: unknown };
  if (typeof report !== 'string' || !report) throw new BadRequest("A report action needs 'report': the report's identifier");
  const list = Array.isArray(ids) ? ids.filter((id): id is number => typeof id === 'number') : recordId !== undefined ? [recordId] : [];
  if (!list.length) throw new BadRequest(`The report action of '${report}' names no records: give 'ids'`);
  return { report, ids: list };
}
