/**
 * What a form's buttons do to its record besides saving: delete it (after a confirmation), run
 * one of the model's methods on it, print one of its reports, open a wizard on it. Methods,
 * reports and wizards work on the stored record, so pending edits are saved first; a method's
 * answer may be a document (downloaded), and the record is read again after it (a method writes).
 */
import { api, filenameOf, readAction, saveBlob } from '../../api.js';
import { notify } from '../../fields/notify.js';
import { confirmDialog } from '../../ui/dialog.js';
import { messageOf } from './use-form-record.js';

/**
 * @typedef {object} ActionsContext
 * @property {string} model
 * @property {number | null} id
 * @property {{label: string}} modelInfo
 * @property {Record<string, string>} route
 * @property {(params: Record<string, unknown>, options?: {replace?: boolean}) => unknown} navigate
 * @property {Record<string, any>} values
 * @property {import('./form-shape.js').FormShape | null} shape
 * @property {{current: boolean}} dirtyRef
 * @property {(failure: string | null) => void} setFailure
 * @property {(busy: boolean) => void} setBusy
 * @property {(shape: import('./form-shape.js').FormShape) => Promise<void>} load
 * @property {() => Promise<number | null>} save
 * @property {(method: string) => void} setWizard
 */

/** @param {ActionsContext} ctx */
export function recordActions(ctx) {
  const { model, id } = ctx;

  const remove = async () => {
    if (id === null) return;
    const name = ctx.values.display_name ?? `#${id}`;
    const label = ctx.modelInfo.label.toLowerCase();
    const yes = await confirmDialog({ title: `Delete ${name}?`, message: `The ${label} “${name}” will be deleted. This cannot be undone.`, confirm: 'Delete', cancel: 'Cancel', danger: true });
    if (!yes) return;
    ctx.setBusy(true);
    try {
      await api.remove(model, id);
      ctx.dirtyRef.current = false;
      notify.success(`${name} deleted`);
      await ctx.navigate({ action: ctx.route.action, view: 'list' });
    } catch (err) {
      ctx.setFailure(messageOf(err));
      ctx.setBusy(false);
    }
  };

  /** The record's id once it is saved with every pending edit (actions run on the stored record). */
  const savedId = async () => (id !== null && !ctx.dirtyRef.current ? id : ctx.save());

  /** @param {string} method */
  const runMethod = async (method) => {
    const recordId = await savedId();
    if (recordId === null || recordId !== id) return;
    ctx.setBusy(true);
    try {
      const response = await api.execute(model, method, { ids: [recordId], request_body: { inputs: {}, context: { active_ids: [recordId], active_model: model } } });
      const outcome = await readAction(/** @type {Response} */ (response));
      if (outcome.document) saveBlob(outcome.document.blob, outcome.document.filename);
      else notify.success('Done');
    } catch (err) {
      notify.error(messageOf(err));
    }
    if (ctx.shape) await ctx.load(ctx.shape); // a method writes the record (a stage, a rate): show what it stored
    ctx.setBusy(false);
  };

  /** @param {{id: number, identifier: string | null, name: string}} report */
  const print = async (report) => {
    const recordId = await savedId();
    if (recordId === null || recordId !== id) return;
    ctx.setBusy(true);
    try {
      const response = /** @type {Response} */ (await api.post('/api/generate_report', { model, report_id: report.identifier ?? report.id, instance_ids: [recordId] }, { raw: true }));
      saveBlob(await response.blob(), filenameOf(response.headers.get('content-disposition')));
    } catch (err) {
      notify.error(messageOf(err));
    }
    ctx.setBusy(false);
  };

  /** @param {string} method */
  const openWizard = async (method) => {
    const recordId = await savedId();
    if (recordId === null || recordId !== id) return;
    ctx.setWizard(method);
  };

  return { remove, runMethod, print, openWizard };
}
