/**
 * One module of the catalogue: its colour and initial, name, category, description, state, what
 * the next restart will do to it, and the action that fits (Install, Upgrade, or taking a mark
 * back). Buttons are named with the module ("Install Sales") so a list of cards stays unambiguous.
 */
import { html } from '../../lib/html.js';

/**
 * @typedef {{identifier: string, name: string, category: string, description: string, icon: string, color: string,
 *   dependencies: string[], state: 'installed' | 'uninstalled', pending: 'install' | 'upgrade' | null,
 *   installed_date: string | null, available: boolean, needed_by?: string[]}} CatalogueEntry
 */

/** A manifest colour as a CSS colour, or null when it is not a plain hex colour. @param {string} color */
function safeColor(color) {
  return /^#[0-9a-fA-F]{3,8}$/.test(color) ? color : null;
}

/**
 * @param {{module: CatalogueEntry, canChange: boolean, busy: boolean, neededBy?: string[],
 *   onMark: (module: CatalogueEntry, action: 'install' | 'upgrade') => void, onCancel: (module: CatalogueEntry) => void}} props
 * `neededBy`: the names of the modules marked for installation that bring this one along.
 */
export function ModuleCard({ module, canChange, busy, neededBy = [], onMark, onCancel }) {
  const titleId = `ff-module-${module.identifier}`;
  const color = safeColor(module.color);
  const installed = module.state === 'installed';
  // Installed at the next start with the modules that need it: nothing to mark (their mark decides).
  const comesAlong = !installed && !module.pending && neededBy.length > 0;
  let action = null;
  if (canChange && module.available && !comesAlong) {
    if (module.pending) {
      const what = module.pending === 'install' ? 'installation' : 'upgrade';
      action = html`<button type="button" class="ff-button" disabled=${busy} aria-label=${`Cancel ${what} of ${module.name}`}
        onClick=${() => onCancel(module)}>Cancel ${what}</button>`;
    } else if (installed) {
      action = html`<button type="button" class="ff-button" disabled=${busy} aria-label=${`Upgrade ${module.name}`}
        onClick=${() => onMark(module, 'upgrade')}>Upgrade</button>`;
    } else {
      action = html`<button type="button" class="ff-button ff-button-primary" disabled=${busy} aria-label=${`Install ${module.name}`}
        onClick=${() => onMark(module, 'install')}>Install</button>`;
    }
  }
  return html`<article class="ff-module-card" aria-labelledby=${titleId}>
    <div class="ff-module-card__icon" aria-hidden="true" style=${color ? `--ff-module-color: ${color}` : undefined}>
      ${module.name.slice(0, 1).toUpperCase()}
    </div>
    <div class="ff-module-card__body">
      <h2 class="ff-module-card__name" id=${titleId}>${module.name}</h2>
      <p class="ff-module-card__meta">
        <code>${module.identifier}</code>${module.category ? html` · <span>${module.category}</span>` : null}
      </p>
      ${module.description ? html`<p class="ff-module-card__description">${module.description}</p>` : null}
      ${module.dependencies.filter((d) => d !== 'core').length
        ? html`<p class="ff-module-card__meta">Needs ${module.dependencies.filter((d) => d !== 'core').join(', ')}</p>` : null}
      <p class="ff-module-card__state">
        ${installed ? html`<span class="ff-badge ff-badge-success">Installed</span>` : html`<span class="ff-badge">Not installed</span>`}
        ${module.pending === 'install' ? html` <span class="ff-badge ff-badge-warning">To install at restart</span>` : null}
        ${comesAlong ? html` <span class="ff-badge ff-badge-warning">${`To install at restart (needed by ${neededBy.join(', ')})`}</span>` : null}
        ${module.pending === 'upgrade' ? html` <span class="ff-badge ff-badge-warning">To upgrade at restart</span>` : null}
        ${module.available ? null : html` <span class="ff-badge ff-badge-danger">Missing on this server</span>`}
      </p>
    </div>
    ${action ? html`<div class="ff-module-card__actions">${action}</div>` : null}
  </article>`;
}
