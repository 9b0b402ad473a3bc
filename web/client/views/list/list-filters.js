/**
 * A list's filters under its toolbar: the builder panel (opened by the toolbar's `Filters`
 * button, whose focus it gives back when it closes) and the chips of the filters in force.
 */
import { html } from '../../../lib/html.js';
import { FilterBuilder, FilterChips } from './filter-builder.js';

/**
 * @param {{
 *   panelId: string, open: boolean, onClose: () => void, fields: any[], initial: string | undefined,
 *   filters: import('./field-filters.js').FieldFilter[], registry: import('./list-columns.js').Registry, lang: string,
 *   onChange: (filters: import('./field-filters.js').FieldFilter[]) => void,
 * }} props
 */
export function ListFilters({ panelId, open, onClose, fields, initial, filters, registry, lang, onChange }) {
  return html`
    <div id=${panelId} hidden=${!open}>
      ${open
        ? html`<${FilterBuilder}
            fields=${fields}
            initial=${initial}
            onAdd=${(/** @type {import('./field-filters.js').FieldFilter} */ f) => {
              onClose();
              onChange([...filters, f]);
            }}
            onClose=${onClose}
          />`
        : null}
    </div>
    <${FilterChips}
      filters=${filters}
      registry=${registry}
      lang=${lang}
      onRemove=${(/** @type {number} */ index) => onChange(filters.filter((_, i) => i !== index))}
      onClear=${() => onChange([])}
    />`;
}
