/**
 * Chooses the widget of a field from the registry (`../registry.js`): the arch's `widget`
 * property first (`statusbar`, `badge`, `tags`, `priority`, a module's own), when it fits the
 * field, else the field's type. Every form, lines table and wizard renders fields through this
 * one component, so a widget a module registers is used everywhere its name is asked for.
 */
import { html } from '../../lib/html.js';
import { registry } from '../registry.js';
// The core widgets are registered before anything is drawn, whoever draws first.
import './core-widgets.js';

/**
 * The registered widget showing `field` with the arch's `properties`.
 * @param {import('./field-props.js').FieldInfo} field @param {Record<string, any>} properties @param {boolean} [readonly]
 * @returns {import('../registry.js').FieldEntry}
 */
export function fieldWidget(field, properties, readonly = true) {
  const named = typeof properties.widget === 'string' ? registry.fieldEntry(properties.widget) : null;
  if (named && (!named.types || named.types.includes(field.type)) && (!named.readonlyOnly || readonly)) return named;
  return registry.fieldEntry(field.type) ?? /** @type {import('../registry.js').FieldEntry} */ (registry.fieldEntry('Char'));
}

/** @param {import('./field-props.js').FieldProps} props */
export function FieldWidget(props) {
  const Widget = fieldWidget(props.field, props.properties, props.readonly).component;
  return html`<${Widget} ...${props} />`;
}
