/**
 * The actions on a list's selection, each one call with the selection object (CONTRACTS C1):
 * Delete (after a confirmation naming how many), Duplicate (`clone`), Archive / Unarchive
 * (`bulk-update` of `active`), Export (the export dialog on these rows), the model's wizards
 * (their dialog), and its reports (the document downloads). Offered only as the caller's rights
 * allow; every outcome is told in a toast.
 */
import { api, filenameOf, saveBlob } from '../../api.js';
import { confirmDialog } from '../../ui/dialog.js';
import { formatNumber } from '../../format.js';

/**
 * @typedef {import('./selection-bar.js').SelectionAction} SelectionAction
 * @typedef {import('./list-query.js').SelectionObject} SelectionObject
 * @typedef {{model: string, label: string, archivable: boolean, create: boolean, write: boolean, unlink: boolean,
 *   wizards: {method: string, title: string}[], reports: {id: number, identifier: string | null, name: string, format: string}[]}} ModelFacts
 */

/** @param {number} n @param {string} label @param {string} lang */
function counted(n, label, lang) {
  return `${formatNumber(n, { digits: 0, lang })} ${n === 1 ? label.toLowerCase() : 'records'}`;
}

/** A toast (role status, or alert for errors). @param {'success' | 'error'} type @param {string} message */
function notify(type, message) {
  window.fieldforge?.toast.show({ type, message });
}

/** @param {unknown} error */
function messageOf(error) {
  return error && typeof error === 'object' && 'detail' in error ? String(/** @type {{detail: unknown}} */ (error).detail) : String(error);
}

/**
 * @param {{
 *   facts: ModelFacts, count: number, lang: string, selection: () => SelectionObject,
 *   archivedShown: boolean,
 *   run: (work: () => Promise<void>) => Promise<void>, done: () => void,
 *   openWizard: (wizard: {method: string, title: string}) => void,
 *   openExport?: (() => void) | null,
 * }} input `run` marks the list busy around the call; `done` clears the selection and reloads.
 * @returns {SelectionAction[]}
 */
export function selectionActions({ facts, count, lang, selection, archivedShown, run, done, openWizard, openExport = null }) {
  /** @type {SelectionAction[]} */
  const actions = [];
  const what = counted(count, facts.label, lang);

  if (facts.create) {
    actions.push({
      label: 'Duplicate',
      run: () =>
        run(async () => {
          try {
            const copies = /** @type {unknown[]} */ (await api.clone(facts.model, selection()));
            notify('success', `${counted(copies.length, facts.label, lang)} duplicated.`);
            done();
          } catch (error) {
            notify('error', messageOf(error));
          }
        }),
    });
  }
  if (facts.archivable && facts.write) {
    /** @param {boolean} active */
    const setActive = (active) =>
      run(async () => {
        try {
          const answer = /** @type {{updated: number}} */ (await api.put(`/api/bulk-update/${encodeURIComponent(facts.model)}`, { selection: selection(), vals: { active } }, {}));
          notify('success', `${counted(answer.updated, facts.label, lang)} ${active ? 'restored' : 'archived'}.`);
          done();
        } catch (error) {
          notify('error', messageOf(error));
        }
      });
    actions.push({ label: 'Archive', run: () => setActive(false) });
    // Restoring makes sense only where archived records show.
    if (archivedShown) actions.push({ label: 'Unarchive', run: () => setActive(true) });
  }
  if (openExport) actions.push({ label: 'Export', run: openExport });
  for (const wizard of facts.wizards) {
    actions.push({ label: wizard.title, run: () => openWizard(wizard) });
  }
  for (const report of facts.reports) {
    if (!report.identifier) continue;
    const identifier = report.identifier;
    actions.push({
      label: `Print ${report.name}`,
      run: () =>
        run(async () => {
          try {
            const response = /** @type {Response} */ (await api.request('POST', '/api/generate_report', { model: facts.model, report_id: identifier, selection: selection() }, { raw: true }));
            saveBlob(await response.blob(), filenameOf(response.headers.get('content-disposition')));
          } catch (error) {
            notify('error', messageOf(error));
          }
        }),
    });
  }
  if (facts.unlink) {
    actions.push({
      label: 'Delete',
      danger: true,
      run: async () => {
        const sure = await confirmDialog({
          title: 'Delete records',
          message: `Delete ${what}? This cannot be undone.`,
          confirm: 'Delete',
          danger: true,
        });
        if (!sure) return;
        await run(async () => {
          try {
            const answer = /** @type {{deleted: number}} */ (await api.bulkDelete(facts.model, selection()));
            notify('success', `${counted(answer.deleted, facts.label, lang)} deleted.`);
            done();
          } catch (error) {
            notify('error', messageOf(error));
          }
        });
      },
    });
  }
  return actions;
}
