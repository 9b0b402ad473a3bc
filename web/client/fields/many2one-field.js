/**
 * A ManyToOne as an autocomplete (`RecordAutocomplete`): the input shows the linked record's
 * name; typing searches the target model within the field's `filter`; emptying the input clears
 * the link; leaving it with text that picked nothing puts the linked name back (a link is never
 * free text).
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { linkName } from '../format.js';
import { controlAttributes } from './control-attributes.js';
import { RecordAutocomplete } from './record-autocomplete.js';

/** @param {import('./field-props.js').FieldProps} props */
export function Many2oneField(props) {
  const { field, value, onChange, readonly } = props;
  const name = linkName(value);
  const [text, setText] = useState(name);
  useEffect(() => setText(name), [name, value?.id]);

  if (readonly) return html`<output class="ff-readonly" ...${controlAttributes(props)}>${name}</output>`;
  if (!field.related_model) return html`<span>${name}</span>`;
  return html`<${RecordAutocomplete} model=${field.related_model} filter=${field.filter}
    text=${text} onText=${setText}
    inputAttributes=${controlAttributes(props)}
    onPick=${(/** @type {{id: number, display_name: string}} */ link) => {
      setText(link.display_name);
      if (link.id !== value?.id) onChange(link);
    }}
    onLeave=${(/** @type {string} */ left) => {
      if (left.trim() === '') {
        if (value) onChange(null);
      } else {
        setText(name);
      }
    }} />`;
}
