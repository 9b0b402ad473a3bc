/**
 * `widget: progress` (a number field): the number as the client's own input shows it, and below
 * it a bar of that number against another field of the record, named by the arch's `max_field`
 * (a task's effective hours against its planned hours), with the share in words: "25 % of Planned
 * hours (8.00)". The bar and the words follow the form's values as they are typed, before
 * anything is saved; more than planned reads as such ("150 % …", the bar full). Nothing planned:
 * "Nothing planned". The bar is named by both fields' labels; the words describe the input too.
 */
import { html } from 'fieldforge/web/lib/html.js';
import { NumberField } from 'fieldforge/web/client/fields/number-field.js';
import { formatNumber } from 'fieldforge/web/client/format.js';

/** `planned_hours` → `Planned hours`: the other field's label, unless the arch gives `max_label`. @param {string} name */
const labelOf = (name) => name.charAt(0).toUpperCase() + name.slice(1).replace(/_/g, ' ');

/** @param {import('fieldforge/web/client/fields/field-props.js').FieldProps} props */
export function ProgressField(props) {
  const { field, value, record, properties, lang } = props;
  const maxField = typeof properties.max_field === 'string' ? properties.max_field : null;
  const max = maxField && typeof record?.[maxField] === 'number' ? record[maxField] : 0;
  const done = typeof value === 'number' ? value : 0;
  const maxLabel = typeof properties.max_label === 'string' ? properties.max_label : labelOf(maxField ?? 'planned');
  const textId = `${props.id}-progress`;
  const words = max > 0
    ? `${formatNumber(Math.round((done / max) * 100), { digits: 0, lang })} % of ${maxLabel} (${formatNumber(max, { digits: field.precision, lang })})`
    : `Nothing planned`;
  const describedBy = [props.describedBy, textId].filter(Boolean).join(' ');
  return html`<div class="ff-progress-field">
    <${NumberField} ...${props} describedBy=${describedBy} />
    <div class="ff-progress-line">
      ${max > 0
        ? html`<progress class="ff-progress-bar" max=${max} value=${Math.min(Math.max(done, 0), max)}
            aria-label=${`${field.label ?? field.name} against ${maxLabel}`}></progress>`
        : null}
      <span id=${textId} class=${`ff-progress-text${done > max && max > 0 ? ' ff-progress-over' : ''}`}>${words}</span>
    </div>
  </div>`;
}
