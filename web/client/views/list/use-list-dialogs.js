/**
 * The dialogs a list opens on its records, each loaded on first use: a wizard on the ticked rows
 * (or on every matching record, as a selection object), the export dialog (on the ticked rows,
 * or on everything the list matches, in the order it shows) and the import dialog. A dialog
 * that cannot be loaded says so in a toast.
 */
import { useState } from 'preact/hooks';
import { errorDetail } from './error-detail.js';
import { orderOf, searchTerms, stateFilter } from './list-query.js';

/**
 * @typedef {{kind: 'export' | 'import', component: any, target?: Record<string, unknown>, count?: number | null, selected?: boolean}} ExchangeDialog
 * @typedef {{method: string, title: string, component: any, activeIds: number[], selection: unknown}} WizardDialogState
 */

/** @param {string} message */
const toastError = (message) => window.fieldforge?.toast.show({ type: 'error', message });

/**
 * @param {{
 *   state: import('./list-route.js').ListState, registry: import('./list-columns.js').Registry, archivable: boolean, defaultOrder: string[],
 *   selection: ReturnType<typeof import('./list-selection.js').useListSelection>, visibleIds: number[], total: number | null,
 *   currentSelection: () => unknown,
 * }} options `state`: the effective one
 */
export function useListDialogs({ state, registry, archivable, defaultOrder, selection, visibleIds, total, currentSelection }) {
  const [exchange, setExchange] = useState(/** @type {ExchangeDialog | null} */ (null));
  const [wizard, setWizard] = useState(/** @type {WizardDialogState | null} */ (null));

  /** @param {{method: string, title: string}} chosen */
  const openWizard = async (chosen) => {
    try {
      const { WizardDialog } = await import('../../wizard/wizard-dialog.js');
      const plain = selection.plain();
      const activeIds = plain.allMatching ? visibleIds.filter((id) => !plain.excluded.includes(id)) : plain.ids;
      setWizard({ ...chosen, component: WizardDialog, activeIds, selection: plain.allMatching ? currentSelection() : undefined });
    } catch (err) {
      toastError(`The ${chosen.title} dialog cannot be opened: ${errorDetail(err)}`);
    }
  };

  /**
   * Opens the export dialog on the ticked rows, or on every record the list matches.
   * @param {boolean} selectedOnly
   */
  const openExport = async (selectedOnly) => {
    try {
      const { ExportDialog } = await import('../../exchange/export-dialog.js');
      /** @type {Record<string, unknown>} */
      let target = {};
      if (selectedOnly) {
        target = { .../** @type {Record<string, unknown>} */ (currentSelection()) };
      } else {
        const filter = stateFilter(state, registry, archivable);
        const terms = searchTerms(state.search);
        if (filter) target.filter_str = filter;
        if (terms.length) target.name_search = terms;
      }
      // The file comes in the order the list shows (the sorted column, else the model's order).
      const order = orderOf(state, defaultOrder);
      if (order.length) target.order_by = order;
      setExchange({ kind: 'export', component: ExportDialog, target, count: selectedOnly ? selection.count : total, selected: selectedOnly });
    } catch (err) {
      toastError(`The export dialog cannot be opened: ${errorDetail(err)}`);
    }
  };

  const openImport = async () => {
    try {
      const { ImportDialog } = await import('../../exchange/import-dialog.js');
      setExchange({ kind: 'import', component: ImportDialog });
    } catch (err) {
      toastError(`The import dialog cannot be opened: ${errorDetail(err)}`);
    }
  };

  return { exchange, wizard, openWizard, openExport, openImport, closeExchange: () => setExchange(null), closeWizard: () => setWizard(null) };
}
