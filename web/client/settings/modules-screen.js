/**
 * Settings > Modules (spec §2.7, CONTRACTS C2): every module this server can install, with its
 * state in this database. Modules load when the server starts, so Install and Upgrade mark a
 * module and the screen says so: the next restart applies the marks, or the command line does
 * it now (the command is shown, ready to copy). A mark can be taken back until then. Searching
 * and the state filter work on the page; the catalogue is small.
 */
import { html } from '../../lib/html.js';
import { useMemo, useState } from 'preact/hooks';
import { api } from '../api.js';
import { CopyButton } from './copy-button.js';
import { ModuleCard } from './module-card.js';
import { useRemoteList } from './remote-list.js';
import { ScreenHeader } from './screen-header.js';

/** @typedef {import('./module-card.js').CatalogueEntry} CatalogueEntry */

/**
 * The command that applies marks now; the same text the server answers a mark with
 * (`cliCommand` in src/api/module-catalogue.ts).
 * @param {string} db @param {'install' | 'upgrade'} action @param {string[]} modules
 */
function cliCommand(db, action, modules) {
  return `npx fieldforge -db ${db} ${action === 'install' ? '--init' : '--update'} ${modules.join(',')}`;
}

const FILTERS = [['all', 'All modules'], ['installed', 'Installed'], ['uninstalled', 'Not installed'], ['pending', 'Marked for restart']];

/** @param {{session: {db?: string}, modelInfo?: {write?: boolean, create?: boolean} | null}} props */
export function ModulesScreen({ session, modelInfo }) {
  const catalogue = useRemoteList('/api/modules');
  const modules = /** @type {CatalogueEntry[] | null} */ (catalogue.items);
  const [search, setSearch] = useState('');
  const [filter, setFilter] = useState('all');
  const [busy, setBusy] = useState(/** @type {string | null} */ (null));
  const [notice, setNotice] = useState(/** @type {{message: string, command: string} | null} */ (null));
  // The screen's own answers decide; the model info only hides buttons a reader could not use.
  const canChange = modelInfo ? modelInfo.write !== false && modelInfo.create !== false : true;

  const shown = useMemo(() => {
    const words = search.trim().toLowerCase().split(/\s+/).filter(Boolean);
    return (modules ?? []).filter((m) => {
      if (filter === 'installed' && m.state !== 'installed') return false;
      if (filter === 'uninstalled' && m.state === 'installed') return false;
      if (filter === 'pending' && !m.pending && !m.needed_by?.length) return false;
      const text = `${m.name} ${m.identifier} ${m.category} ${m.description}`.toLowerCase();
      return words.every((w) => text.includes(w));
    });
  }, [modules, search, filter]);

  const pending = (modules ?? []).filter((m) => m.pending);
  const names = new Map((modules ?? []).map((m) => [m.identifier, m.name]));
  /** The names of the marked modules that bring `module` along. @param {CatalogueEntry} module */
  const neededBy = (module) => (module.needed_by ?? []).map((id) => names.get(id) ?? id);
  /** What comes along with a marked install. @param {CatalogueEntry} marked */
  const along = (marked) => (modules ?? []).filter((m) => m.needed_by?.includes(marked.identifier)).map((m) => m.name);
  const db = session?.db ?? '<database>';
  const commands = /** @type {const} */ (['install', 'upgrade'])
    .map((action) => [action, pending.filter((m) => m.pending === action).map((m) => m.identifier)])
    .filter(([, ids]) => ids.length)
    .map(([action, ids]) => cliCommand(db, /** @type {'install' | 'upgrade'} */ (action), /** @type {string[]} */ (ids)));

  /** @param {CatalogueEntry} module @param {'install' | 'upgrade'} action */
  const mark = async (module, action) => {
    setBusy(module.identifier);
    try {
      const answer = /** @type {{message: string, command: string}} */ (await api.post(`/api/modules/${encodeURIComponent(module.identifier)}/${action}`, {}, {}));
      setNotice({ message: answer.message, command: answer.command });
    } catch (err) {
      window.fieldforge?.toast.show({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(null);
    }
    await catalogue.reload();
  };

  /** @param {CatalogueEntry} module */
  const cancel = async (module) => {
    setBusy(module.identifier);
    try {
      await api.del(`/api/modules/${encodeURIComponent(module.identifier)}/pending`, undefined, {});
      setNotice(null);
      window.fieldforge?.toast.show({ type: 'success', message: `${module.name} is no longer marked.` });
    } catch (err) {
      window.fieldforge?.toast.show({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(null);
    }
    await catalogue.reload();
  };

  return html`<section class="ff-settings-screen" aria-labelledby="ff-modules-title">
    <${ScreenHeader} id="ff-modules-title" title="Modules"
      intro="The modules this server can install. Installing or upgrading takes effect when the server restarts." />
    <div class="ff-visually-hidden" role="status">
      ${notice ? html`<p>${notice.message}</p>` : null}
    </div>
    ${pending.length ? html`<div class="ff-settings-pending">
      <p><strong>${pending.length === 1 ? '1 module is' : `${pending.length} modules are`} marked:</strong>
        ${' '}${pending.map((m) => `${m.name} (${m.pending === 'install' ? `install${along(m).length ? `, with ${along(m).join(', ')}` : ''}` : 'upgrade'})`).join(', ')}.
        Restart the server to apply, or run:</p>
      ${commands.map((command) => html`<div class="ff-settings-command" key=${command}>
        <code>${command}</code><${CopyButton} text=${command} what="Command" label="Copy command" />
      </div>`)}
    </div>` : null}
    ${catalogue.error ? html`<p class="ff-settings-problem" role="alert">${catalogue.error}</p>` : null}
    ${modules === null && !catalogue.error ? html`<p role="status">Loading…</p>` : null}
    ${modules ? html`
      <div class="ff-settings-toolbar" role="search">
        <label class="ff-visually-hidden" for="ff-modules-search">Search modules</label>
        <input id="ff-modules-search" class="ff-input" type="search" placeholder="Search modules" value=${search}
          onInput=${(/** @type {InputEvent} */ e) => setSearch(/** @type {HTMLInputElement} */ (e.target).value)} />
        <label class="ff-visually-hidden" for="ff-modules-filter">Show</label>
        <select id="ff-modules-filter" class="ff-input" value=${filter}
          onChange=${(/** @type {Event} */ e) => setFilter(/** @type {HTMLSelectElement} */ (e.target).value)}>
          ${FILTERS.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
        </select>
      </div>
      ${canChange ? null : html`<p class="ff-settings-hint">Only administrators can install or upgrade modules.</p>`}
      ${shown.length
        ? html`<ul class="ff-module-grid" aria-label="Modules">
          ${shown.map((m) => html`<li key=${m.identifier}>
            <${ModuleCard} module=${m} canChange=${canChange} busy=${busy === m.identifier} neededBy=${neededBy(m)} onMark=${mark} onCancel=${cancel} />
          </li>`)}
        </ul>`
        : html`<p class="ff-settings-empty">No module matches.</p>`}` : null}
  </section>`;
}
