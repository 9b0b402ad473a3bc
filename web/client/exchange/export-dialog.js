/**
 * Export from a list (spec §4.7, CONTRACTS C3): the rows are the list's whole match or its
 * ticked rows (`target`, already in the export route's flat keys), the columns are chosen here
 * — added from the model's fields (and through relations), ordered, removed — and the file is
 * the server's XLSX, saved under the name its `Content-Disposition` gives.
 *
 * "Import-compatible" writes field paths as headers and values an import reads back; it offers
 * only importable fields. A choice of columns is kept as a template (`ExportPreset`, one per
 * name, the user's own) and reapplied from the Template menu; "Every importable field" is the
 * built-in import-compatible template.
 */
import { html } from '../../lib/html.js';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, filenameOf, saveBlob } from '../api.js';
import { formatNumber } from '../format.js';
import { Dialog } from '../ui/dialog.js';
import { useUniqueId } from '../views/list/unique-id.js';
import { deletePreset, listPresets, savePreset } from './export-presets.js';
import { exportableFields, isImportable, pathLabel } from './field-paths.js';
import { FieldPicker } from './field-picker.js';

/**
 * @typedef {import('./field-paths.js').Registry} Registry
 * @typedef {import('./field-paths.js').FieldPath} FieldPath
 * @typedef {import('./export-presets.js').ExportPreset} ExportPreset
 * @typedef {{filter_str?: string, name_search?: string[], ids?: number[], exclude_ids?: number[], order_by?: string[]}} ExportTarget
 * @typedef {{path: string, label: string}} Chosen
 */

/** The Template menu's value of the built-in import-compatible template. */
const ALL_IMPORTABLE = 'builtin:importable';

/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * @param {{
 *   model: string, label: string, registry: Registry, initialPaths: string[],
 *   target: ExportTarget, count: number | null, selected: boolean, lang: string, onClose: () => void,
 * }} props `selected`: the rows are the ticked ones (else every record the list matches).
 */
export function ExportDialog({ model, label, registry, initialPaths, target, count, selected, lang, onClose }) {
  const id = useUniqueId('ff-export');
  const [importCompatible, setImportCompatible] = useState(false);
  const [chosen, setChosen] = useState(/** @type {Chosen[]} */ ([]));
  const [filter, setFilter] = useState('');
  const [presets, setPresets] = useState(/** @type {ExportPreset[]} */ ([]));
  const [template, setTemplate] = useState('');
  const [templateName, setTemplateName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [status, setStatus] = useState('');

  const available = useMemo(() => exportableFields(registry, { importCompatible }), [registry, importCompatible]);
  const chosenPaths = useMemo(() => new Set(chosen.map((c) => c.path)), [chosen]);

  useEffect(() => {
    setChosen(initialPaths.filter((p) => registry[p]).map((p) => ({ path: p, label: registry[p].label })));
    listPresets(model)
      .then(setPresets)
      .catch((err) => setError(`Saved templates cannot be read: ${messageOf(err)}`));
  }, [model]);

  /** Labels of a preset's paths, through the relations they cross. @param {string[]} paths */
  const labelled = (paths) => Promise.all(paths.map(async (path) => ({ path, label: await pathLabel(model, path) })));

  /** @param {string} value */
  const applyTemplate = async (value) => {
    setTemplate(value);
    setError(null);
    if (!value) return;
    if (value === ALL_IMPORTABLE) {
      setImportCompatible(true);
      const fields = exportableFields(registry, { importCompatible: true }).filter((f) => f.path !== 'id');
      setChosen(fields.map((f) => ({ path: f.path, label: f.label })));
      setStatus(`Template applied: ${fields.length} fields.`);
      return;
    }
    const preset = presets.find((p) => String(p.id) === value);
    if (!preset) return;
    setImportCompatible(preset.import_compatible);
    setChosen(await labelled(preset.export_fields));
    setTemplateName(preset.name);
    setStatus(`Template ${preset.name} applied: ${preset.export_fields.length} fields.`);
  };

  /** @param {boolean} on */
  const setCompatible = (on) => {
    setImportCompatible(on);
    // What an import cannot write back leaves the columns (top-level fields; paths resolve by their target).
    if (on) setChosen((current) => current.filter((c) => c.path.includes('/') || (registry[c.path] && isImportable(c.path, registry[c.path]))));
  };

  /** @param {number} index @param {-1 | 1} step */
  const move = (index, step) => {
    const to = index + step;
    if (to < 0 || to >= chosen.length) return;
    const next = [...chosen];
    [next[index], next[to]] = [next[to], next[index]];
    setChosen(next);
    setStatus(`${next[to].label} moved to position ${to + 1} of ${next.length}.`);
    // The button pressed may have moved away: focus follows the field.
    requestAnimationFrame(() => document.getElementById(`${id}-chosen-${to}-${step < 0 ? 'up' : 'down'}`)?.focus());
  };

  const saveTemplate = async () => {
    const name = templateName.trim();
    if (!name) {
      setError('Name the template before saving it.');
      document.getElementById(`${id}-template-name`)?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const savedId = await savePreset(model, { name, export_fields: chosen.map((c) => c.path), import_compatible: importCompatible }, presets);
      setPresets(await listPresets(model));
      setTemplate(String(savedId));
      setStatus(`Template ${name} saved.`);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const removeTemplate = async () => {
    const preset = presets.find((p) => String(p.id) === template);
    if (!preset) return;
    setBusy(true);
    setError(null);
    try {
      await deletePreset(preset.id);
      setPresets(presets.filter((p) => p.id !== preset.id));
      setTemplate('');
      setStatus(`Template ${preset.name} deleted.`);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const runExport = async () => {
    if (!chosen.length) {
      setError('Add at least one field to export.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const body = { ...target, fields: chosen.map((c) => c.path), import_compatible: importCompatible };
      const response = /** @type {Response} */ (await api.request('POST', `/api/export/${encodeURIComponent(model)}`, body, { raw: true }));
      const filename = filenameOf(response.headers.get('content-disposition'));
      saveBlob(await response.blob(), filename === 'download' ? `${label}.xlsx` : filename);
      window.fieldforge?.toast.show({ type: 'success', message: `Exported to ${filename}.` });
      onClose();
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };

  const n = count === null ? null : formatNumber(count, { digits: 0, lang });
  const what = selected
    ? `The ${n ?? ''} selected ${count === 1 ? 'record' : 'records'}`.replace(/\s+/g, ' ')
    : `Every record this list matches${n === null ? '' : ` (${n})`}`;
  const userPreset = presets.some((p) => String(p.id) === template);

  const footer = html`
    <button type="button" class="ff-button" onClick=${onClose} disabled=${busy}>Cancel</button>
    <button type="button" class="ff-button ff-button-primary" onClick=${runExport} disabled=${busy || !chosen.length}>${busy ? 'Exporting…' : 'Export'}</button>`;

  return html`<${Dialog} title=${`Export ${label}`} onClose=${onClose} footer=${footer} wide busy=${busy}>
    <div class="ff-exchange">
      <p class="ff-exchange-scope">${what}.</p>
      ${error ? html`<p class="ff-error-text" role="alert">${error}</p>` : null}
      <p class="ff-visually-hidden" role="status">${status}</p>
      <div class="ff-exchange-options">
        <span class="ff-field">
          <label class="ff-label" for=${`${id}-template`}>Template</label>
          <select id=${`${id}-template`} class="ff-input" value=${template} onChange=${(/** @type {Event} */ e) => applyTemplate(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
            <option value="">None</option>
            <option value=${ALL_IMPORTABLE}>Every importable field (import-compatible)</option>
            ${presets.map((p) => html`<option key=${p.id} value=${String(p.id)}>${p.name}</option>`)}
          </select>
        </span>
        <label class="ff-exchange-check">
          <input type="checkbox" checked=${importCompatible} onChange=${(/** @type {Event} */ e) => setCompatible(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} />
          Import-compatible export
        </label>
      </div>
      <p class="ff-exchange-hint" id=${`${id}-compatible-hint`}>${importCompatible
        ? 'Headers are field paths and values are what an import reads back: fix the file and import it again.'
        : 'Headers are field labels and values are formatted for reading.'}</p>
      <div class="ff-exchange-columns">
        <section class="ff-exchange-pane" aria-labelledby=${`${id}-available`}>
          <h3 id=${`${id}-available`} class="ff-exchange-pane-title">Available fields</h3>
          <label class="ff-visually-hidden" for=${`${id}-search`}>Search fields</label>
          <input id=${`${id}-search`} type="search" class="ff-input" placeholder="Search fields…" autocomplete="off" value=${filter}
            onInput=${(/** @type {InputEvent} */ e) => setFilter(/** @type {HTMLInputElement} */ (e.currentTarget).value)} />
          <div class="ff-exchange-scroll">
            <${FieldPicker} fields=${available} chosen=${chosenPaths} filter=${filter} importCompatible=${importCompatible}
              onAdd=${(/** @type {FieldPath} */ f) => {
                setChosen((current) => [...current, { path: f.path, label: f.label }]);
                setStatus(`${f.label} added.`);
              }} />
          </div>
        </section>
        <section class="ff-exchange-pane" aria-labelledby=${`${id}-chosen`}>
          <h3 id=${`${id}-chosen`} class="ff-exchange-pane-title">Fields to export (${chosen.length})</h3>
          ${chosen.length
            ? html`<ol class="ff-exchange-chosen" aria-labelledby=${`${id}-chosen`}>
                ${chosen.map((c, index) => html`<li key=${c.path} class="ff-exchange-field">
                  <span class="ff-exchange-field-label">${c.label}${importCompatible ? html` <code>${c.path}</code>` : null}</span>
                  <button type="button" id=${`${id}-chosen-${index}-up`} class="ff-icon-button" aria-label=${`Move ${c.label} up`} disabled=${index === 0} onClick=${() => move(index, -1)}>↑</button>
                  <button type="button" id=${`${id}-chosen-${index}-down`} class="ff-icon-button" aria-label=${`Move ${c.label} down`} disabled=${index === chosen.length - 1} onClick=${() => move(index, 1)}>↓</button>
                  <button type="button" class="ff-icon-button" aria-label=${`Remove ${c.label}`} onClick=${() => {
                    setChosen(chosen.filter((x) => x.path !== c.path));
                    setStatus(`${c.label} removed.`);
                  }}>×</button>
                </li>`)}
              </ol>`
            : html`<p class="ff-exchange-hint">No fields yet: add them from the available fields.</p>`}
          <div class="ff-exchange-save">
            <span class="ff-field">
              <label class="ff-label" for=${`${id}-template-name`}>Template name</label>
              <input id=${`${id}-template-name`} class="ff-input" type="text" maxlength="120" autocomplete="off" value=${templateName}
                onInput=${(/** @type {InputEvent} */ e) => setTemplateName(/** @type {HTMLInputElement} */ (e.currentTarget).value)} />
            </span>
            <button type="button" class="ff-button" onClick=${saveTemplate} disabled=${busy || !chosen.length}>Save template</button>
            ${userPreset ? html`<button type="button" class="ff-button ff-button-danger" onClick=${removeTemplate} disabled=${busy}>Delete template</button>` : null}
          </div>
        </section>
      </div>
    </div>
  <//>`;
}
