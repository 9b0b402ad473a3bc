/**
 * Chooses the widget of a field: the arch's `widget` property first (`statusbar`, `badge`,
 * `tags`, `priority`, `toggle`), else the field's type. Every form, lines table and wizard
 * renders fields through this one component.
 */
import { html } from '../../lib/html.js';
import { BadgeField } from './badge-field.js';
import { BinaryField } from './binary-field.js';
import { BooleanField } from './boolean-field.js';
import { CharField } from './char-field.js';
import { DateField } from './date-field.js';
import { DatetimeField } from './datetime-field.js';
import { FileField } from './file-field.js';
import { JsonField } from './json-field.js';
import { Many2manyTagsField } from './many2many-tags-field.js';
import { Many2oneField } from './many2one-field.js';
import { MonetaryField } from './monetary-field.js';
import { NumberField } from './number-field.js';
import { PriorityField } from './priority-field.js';
import { SelectionField } from './selection-field.js';
import { StatusbarField } from './statusbar-field.js';
import { TextField } from './text-field.js';

/** @type {Record<string, (props: import('./field-props.js').FieldProps) => any>} */
const BY_TYPE = {
  Char: CharField,
  Text: TextField,
  Boolean: BooleanField,
  Integer: NumberField,
  Float: NumberField,
  Monetary: MonetaryField,
  Date: DateField,
  Datetime: DatetimeField,
  Selection: SelectionField,
  ManyToOne: Many2oneField,
  ManyToMany: Many2manyTagsField,
  File: FileField,
  Binary: BinaryField,
  Json: JsonField,
};

/**
 * The component showing `field` with the arch's `properties`; a badge is how a read-only value
 * reads, an editable one keeps its ordinary control.
 * @param {import('./field-props.js').FieldInfo} field @param {Record<string, any>} properties @param {boolean} [readonly]
 */
export function widgetOf(field, properties, readonly = true) {
  switch (properties.widget) {
    case 'statusbar':
      if (field.type === 'ManyToOne' || field.type === 'Selection') return StatusbarField;
      break;
    case 'priority':
      if (field.type === 'Selection') return PriorityField;
      break;
    case 'badge':
      if (readonly) return BadgeField;
      break;
    case 'tags':
      if (field.type === 'ManyToMany') return Many2manyTagsField;
      break;
    default:
  }
  return BY_TYPE[field.type] ?? CharField;
}

/** Widgets that are a group of controls, labelled by `aria-labelledby` rather than `<label for>`. */
export function isGroupWidget(/** @type {any} */ widget) {
  return widget === StatusbarField || widget === PriorityField;
}

/** @param {import('./field-props.js').FieldProps} props */
export function FieldWidget(props) {
  const Widget = widgetOf(props.field, props.properties, props.readonly);
  return html`<${Widget} ...${props} />`;
}
