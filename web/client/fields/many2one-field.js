/**
 * A ManyToOne as an autocomplete (`RecordAutocomplete`): the input shows the linked record's
 * name; typing searches the target model within the field's `filter`; emptying the input clears
 * the link; leaving it with text that picked nothing puts the linked name back (a link is never
 * free text). A link to a `User` shows that person's presence dot before the name (Odoo's
 * avatar-with-status next to a salesperson or an assignee).
 */
import { html } from '../../lib/html.js';
import { useEffect, useState } from 'preact/hooks';
import { linkName } from '../format.js';
import { PresenceDot } from '../realtime/presence.js';
import { controlAttributes } from './control-attributes.js';
import { RecordAutocomplete } from './record-autocomplete.js';

/** @param {import('./field-props.js').FieldProps} props */
export function Many2oneField(props) {
  const { field, value, onChange, readonly } = props;
  const name = linkName(value);
  const [text, setText] = useState(name);
  useEffect(() => setText(name), [name, value?.id]);

  const widget = renderLink(props, name, text, setText);
  if (field.related_model !== 'User' || typeof value?.id !== 'number') return widget;
  return html`<span class="ff-user-link"><${PresenceDot} userId=${value.id} />${widget}</span>`;
}

/**
 * @param {import('./field-props.js').FieldProps} props @param {string} name
 * @param {string} text @param {(text: string) => void} setText
 */
function renderLink(props, name, text, setText) {
  const { field, value, onChange, readonly } = props;
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
