/**
 * The export dialog's list of available fields: each field with an `Add` button, relations with
 * a button showing the related model's fields beneath (paths through `/`, as deep as a person
 * opens them), and a box narrowing the list by label or path.
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { exportableFields, isRelational, registryOf } from './field-paths.js';

/** @typedef {import('./field-paths.js').FieldPath} FieldPath */

/** Relations opened below this many steps stop offering deeper ones. */
const MAX_DEPTH = 3;

/**
 * @param {{fields: FieldPath[], chosen: Set<string>, onAdd: (field: FieldPath) => void, filter: string, importCompatible: boolean, depth?: number}} props
 */
export function FieldPicker({ fields, chosen, onAdd, filter, importCompatible, depth = 1 }) {
  const [open, setOpen] = useState(/** @type {Set<string>} */ (new Set()));
  const needle = filter.trim().toLowerCase();
  /** @param {string} path */
  const toggle = (path) =>
    setOpen((current) => {
      const next = new Set(current);
      next.has(path) ? next.delete(path) : next.add(path);
      return next;
    });
  return html`<ul class="ff-exchange-fields" role="list">
    ${fields.map((field) => {
      const matches = !needle || field.label.toLowerCase().includes(needle) || field.path.toLowerCase().includes(needle);
      const expandable = isRelational(field.entry) && depth < MAX_DEPTH;
      const opened = open.has(field.path);
      if (!matches && !opened) return null;
      return html`<li key=${field.path}>
        <div class="ff-exchange-field">
          ${expandable
            ? html`<button type="button" class="ff-icon-button ff-exchange-expand" aria-expanded=${opened ? 'true' : 'false'}
                aria-label=${`Fields of ${field.label}`} onClick=${() => toggle(field.path)}>${opened ? '▾' : '▸'}</button>`
            : html`<span class="ff-exchange-expand" aria-hidden="true"></span>`}
          <span class="ff-exchange-field-label">${field.label}${importCompatible ? html` <code>${field.path}</code>` : null}</span>
          <button type="button" class="ff-button ff-exchange-add" aria-label=${`Add ${field.label}`} disabled=${chosen.has(field.path)}
            onClick=${() => onAdd(field)}>Add</button>
        </div>
        ${opened
          ? html`<${RelatedFields} field=${field} chosen=${chosen} onAdd=${onAdd} filter=${filter} importCompatible=${importCompatible} depth=${depth + 1} />`
          : null}
      </li>`;
    })}
  </ul>`;
}

/**
 * The fields of a relation's target, loaded when first opened.
 * @param {{field: FieldPath, chosen: Set<string>, onAdd: (field: FieldPath) => void, filter: string, importCompatible: boolean, depth: number}} props
 */
function RelatedFields({ field, chosen, onAdd, filter, importCompatible, depth }) {
  const [fields, setFields] = useState(/** @type {FieldPath[] | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  useEffect(() => {
    let live = true;
    registryOf(/** @type {string} */ (field.entry.related_model))
      .then((registry) => live && setFields(exportableFields(registry, { prefix: `${field.path}/`, labelPrefix: `${field.label} / ` })))
      .catch((err) => live && setError(err instanceof Error ? err.message : String(err)));
    return () => {
      live = false;
    };
  }, [field.path]);
  if (error) return html`<p class="ff-error-text" role="alert">${error}</p>`;
  if (!fields) return html`<p class="ff-muted" role="status">Loading…</p>`;
  // Below a relation any field may be named: import resolves `customer/name` by that field.
  return html`<${FieldPicker} fields=${fields} chosen=${chosen} onAdd=${onAdd} filter=${filter} importCompatible=${importCompatible} depth=${depth} />`;
}
