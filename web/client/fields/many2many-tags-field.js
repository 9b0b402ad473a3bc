/**
 * A ManyToMany as tags (`widget: tags`, and the default for ManyToMany): each linked record is a
 * chip with its own remove button, and an autocomplete adds more (records already linked are not
 * offered). Backspace in the empty input removes the last tag, as in most tag inputs.
 */
import { html } from '../../lib/html.js';
import { useState } from 'preact/hooks';
import { linkName } from '../format.js';
import { controlAttributes } from './control-attributes.js';
import { RecordAutocomplete } from './record-autocomplete.js';

/** @param {import('./field-props.js').FieldProps} props */
export function Many2manyTagsField(props) {
  const { field, onChange, readonly } = props;
  /** @type {{id: number, display_name: string}[]} */
  const links = Array.isArray(props.value) ? props.value : [];
  const [text, setText] = useState('');

  /** @param {number} id */
  const remove = (id) => onChange(links.filter((l) => l.id !== id));

  return html`<div class=${`ff-tags${readonly ? ' ff-tags-readonly' : ''}`}>
    <ul class="ff-tag-list" role="list">
      ${links.map((link) => html`<li class="ff-tag">
        <span>${linkName(link)}</span>
        ${readonly ? null : html`<button type="button" class="ff-tag-remove" aria-label=${`Remove ${linkName(link)}`} title="Remove"
          onClick=${() => remove(link.id)}>×</button>`}
      </li>`)}
    </ul>
    ${readonly || !field.related_model ? null : html`<${RecordAutocomplete} model=${field.related_model} filter=${field.filter}
      excludeIds=${links.map((l) => l.id)} text=${text} onText=${setText} placeholder="Add…"
      inputAttributes=${controlAttributes(props)}
      onPick=${(/** @type {{id: number, display_name: string}} */ link) => {
        setText('');
        if (!links.some((l) => l.id === link.id)) onChange([...links, link]);
      }}
      onLeave=${() => setText('')}
      onBackspaceEmpty=${() => { if (links.length) remove(links[links.length - 1].id); }} />`}
  </div>`;
}
