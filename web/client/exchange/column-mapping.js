/**
 * The import dialog's column mapping: one row per column of the file with its header, a few
 * sample values and the field it imports into (the server's suggestion preselected, "Do not
 * import" to skip it). A field taken by two columns is said at both.
 */
import { html } from '../../lib/html.js';

/**
 * @typedef {import('./field-paths.js').FieldPath} FieldPath
 */

/** @param {unknown} value */
const text = (value) => (value === null || value === undefined ? '' : String(value));

/**
 * @param {{
 *   headers: string[], samples: unknown[][], targets: FieldPath[], mapping: string[],
 *   onChange: (index: number, path: string) => void, idPrefix: string,
 * }} props
 */
export function ColumnMapping({ headers, samples, targets, mapping, onChange, idPrefix }) {
  const taken = new Map();
  for (const path of mapping) if (path) taken.set(path, (taken.get(path) ?? 0) + 1);
  const known = new Set(targets.map((t) => t.path));
  return html`<table class="ff-table ff-exchange-mapping">
    <caption class="ff-visually-hidden">Column mapping</caption>
    <thead><tr><th scope="col">Column in the file</th><th scope="col">Sample values</th><th scope="col">Import as</th></tr></thead>
    <tbody>
      ${headers.map((header, index) => {
        const path = mapping[index] ?? '';
        const name = header || `Column ${index + 1}`;
        const duplicate = path && (taken.get(path) ?? 0) > 1;
        const problemId = `${idPrefix}-map-${index}-problem`;
        return html`<tr key=${index}>
          <th scope="row">${name}</th>
          <td class="ff-exchange-samples">${samples.map((row) => text(row[index])).filter(Boolean).slice(0, 3).join(', ')}</td>
          <td>
            <select class="ff-input" aria-label=${`Import column ${name} as`} value=${path}
              aria-invalid=${duplicate ? 'true' : undefined} aria-describedby=${duplicate ? problemId : undefined}
              onChange=${(/** @type {Event} */ e) => onChange(index, /** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
              <option value="">Do not import</option>
              ${path && !known.has(path) ? html`<option value=${path}>${path}</option>` : null}
              ${targets.map((t) => html`<option key=${t.path} value=${t.path}>${t.label}</option>`)}
            </select>
            ${duplicate ? html`<span id=${problemId} class="ff-error-text">Another column imports into this field too.</span>` : null}
          </td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}
