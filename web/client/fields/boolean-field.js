/**
 * A Boolean as a checkbox, or as a switch (`widget: toggle`, `role="switch"`, what settings and
 * `active` flags read best as). Either way the field's label names it.
 */
import { html } from '../../lib/html.js';
import { controlAttributes } from './control-attributes.js';

/** @param {import('./field-props.js').FieldProps} props */
export function BooleanField(props) {
  const { value, onChange, readonly, properties } = props;
  const toggle = properties.widget === 'toggle' || properties.widget === 'boolean_toggle';
  return html`<span class=${toggle ? 'ff-switch' : 'ff-checkbox'}>
    <input type="checkbox" ...${controlAttributes(props)} role=${toggle ? 'switch' : undefined}
      checked=${Boolean(value)} disabled=${readonly} aria-readonly=${readonly ? 'true' : undefined}
      onChange=${(/** @type {Event} */ e) => onChange(/** @type {HTMLInputElement} */ (e.currentTarget).checked)} />
    ${toggle ? html`<span class="ff-switch-track" aria-hidden="true"></span>` : null}
  </span>`;
}
