/**
 * `widget: badge`: the value (a selection's label, a link's name) as a coloured badge. A person
 * who may change it gets the field's ordinary control; the badge is how a read-only value reads.
 */
import { html } from '../../lib/html.js';
import { formatValue } from '../format.js';
import { controlAttributes } from './control-attributes.js';

/** @param {import('./field-props.js').FieldProps} props */
export function BadgeField(props) {
  const text = formatValue(props.field, props.value, { lang: props.lang, record: props.record });
  return html`<output class="ff-readonly" ...${controlAttributes(props)}>${text ? html`<span class="ff-badge">${text}</span>` : ''}</output>`;
}
