/**
 * One value in a list cell, drawn as the arch's widget asks: `badge` (a pill), `tags` (one pill
 * per linked record), `toggle` and booleans (a mark with its word for screen readers),
 * `priority` (stars named by the choice's label); a link to a `User` with its presence dot; a
 * registered widget's own `cell` (a module's, `../../registry.js`); anything else is the
 * formatted text.
 */
import { html } from '../../../lib/html.js';
import { formatValue, linkName } from '../../format.js';
import { PresenceDot } from '../../realtime/presence.js';
import { registry } from '../../registry.js';

/**
 * @typedef {import('./list-columns.js').Column} Column
 */

/**
 * The cell's content. A plain function, not a component: a page has hundreds of cells, and a
 * component instance each would cost more than the value itself.
 * @param {Column} column @param {Record<string, unknown>} record @param {string} lang
 */
export function cellContent(column, record, lang) {
  const value = record[column.name];
  const { field, widget } = column;
  const entry = widget ? registry.fieldEntry(widget) : null;
  if (entry?.cell && (!entry.types || entry.types.includes(field.type))) return entry.cell({ value, record, field, lang });
  if (field.type === 'Boolean' || widget === 'toggle' || widget === 'boolean') {
    return value
      ? html`<span class="ff-list-check" role="img" aria-label="Yes">✓</span>`
      : html`<span class="ff-list-check ff-list-check-off" role="img" aria-label="No">–</span>`;
  }
  if (widget === 'priority' && field.type === 'Selection' && field.choices?.length) {
    const index = field.choices.findIndex(([key]) => key === value);
    if (index < 0) return null;
    const label = field.choices[index][1];
    const stars = field.choices.length - 1;
    return html`<span class="ff-list-priority" role="img" aria-label=${label} title=${label}>${Array.from({ length: stars }, (_, i) => (i < index ? '★' : '☆')).join('')}</span>`;
  }
  if ((widget === 'tags' || field.type === 'ManyToMany') && Array.isArray(value)) {
    if (!value.length) return null;
    return html`<span class="ff-list-tags">${value.map((link) => html`<span class="ff-badge" key=${link?.id}>${linkName(link)}</span>`)}</span>`;
  }
  const text = formatValue(field, value, { lang, record });
  if (!text) return null;
  if (field.type === 'ManyToOne' && field.related_model === 'User' && value && typeof value === 'object' && 'id' in value && typeof value.id === 'number') {
    return html`<span class="ff-list-user"><${PresenceDot} userId=${value.id} />${text}</span>`;
  }
  if (widget === 'badge') return html`<span class=${`ff-badge ff-list-badge-${badgeTone(value)}`}>${text}</span>`;
  return text;
}

/**
 * A stable colour slot for a badge value, so one stage keeps its colour on every row.
 * @param {unknown} value
 */
function badgeTone(value) {
  const key = value && typeof value === 'object' && 'id' in value ? String(/** @type {{id: unknown}} */ (value).id) : String(value);
  let hash = 0;
  for (const c of key) hash = (hash * 31 + c.charCodeAt(0)) | 0;
  return Math.abs(hash) % 6;
}
