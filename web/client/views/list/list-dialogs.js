/**
 * The open dialog of a list (`use-list-dialogs.js`): a wizard, the export or the import dialog,
 * each told the list's model, and what it works on. A wizard or an import that changed records
 * has the list read again (`onChanged`).
 */
import { html } from '../../../lib/html.js';

/**
 * @param {{
 *   dialogs: ReturnType<typeof import('./use-list-dialogs.js').useListDialogs>, model: string, title: string,
 *   registry: import('./list-columns.js').Registry, columns: import('./list-columns.js').Column[], lang: string, onChanged: () => void,
 * }} props
 */
export function ListDialogs({ dialogs, model, title, registry, columns, lang, onChanged }) {
  const { wizard, exchange } = dialogs;
  const WizardComponent = wizard?.component;
  const ExchangeComponent = exchange?.component;
  return html`
    ${WizardComponent && wizard
      ? html`<${WizardComponent}
          model=${model}
          method=${wizard.method}
          activeIds=${wizard.activeIds}
          selection=${wizard.selection}
          lang=${lang}
          onClose=${dialogs.closeWizard}
          onDone=${(/** @type {{reload: boolean}} */ outcome) => {
            if (outcome.reload) onChanged();
          }}
        />`
      : null}
    ${ExchangeComponent && exchange?.kind === 'export'
      ? html`<${ExchangeComponent}
          model=${model}
          label=${title}
          registry=${registry}
          initialPaths=${columns.map((c) => c.name)}
          target=${exchange.target}
          count=${exchange.count ?? null}
          selected=${Boolean(exchange.selected)}
          lang=${lang}
          onClose=${dialogs.closeExchange}
        />`
      : null}
    ${ExchangeComponent && exchange?.kind === 'import'
      ? html`<${ExchangeComponent}
          model=${model}
          label=${title}
          registry=${registry}
          lang=${lang}
          onClose=${dialogs.closeExchange}
          onImported=${onChanged}
        />`
      : null}`;
}
