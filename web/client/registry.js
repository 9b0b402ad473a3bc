/**
 * The web client's registry (CONTRACTS C2), open to modules as Odoo's is to addons: field widgets
 * by name. `registry.field(name, component, options)` registers a widget under an arch `widget`
 * name (`statusbar`, `priority`, a module's `progress`) or a field type (`Char`, `ManyToOne`:
 * what a field shows when its arch names no widget, or one that does not fit it). The client's
 * own widgets are registered first (`fields/core-widgets.js`); a module's web assets
 * (`modules/<identifier>/web/index.js`, loaded by the client at start, before the first view is
 * drawn) add theirs, by importing this file as `fieldforge/web/client/registry.js`. A later
 * registration of a name replaces the earlier, so a module may also replace a core widget.
 *
 * A widget is a component of `FieldProps` (`fields/field-props.js`): it shows `value` and
 * reports a new one through `onChange`. It may also say how a list's cell shows the value (`cell`).
 * A module may also add a part to a model's chatter (`chatterPart`).
 */

/**
 * @typedef {(props: import('./fields/field-props.js').FieldProps) => any} FieldComponent
 *
 * @typedef {object} FieldOptions
 * @property {string[]} [types] the field types the widget fits (none: any); on another type the
 *   field shows its type's widget
 * @property {boolean} [readonlyOnly] only for a read-only field (a badge): an editable one keeps
 *   its type's control
 * @property {boolean} [group] the widget is a group of controls (radios, buttons), labelled by
 *   `aria-labelledby` pointing at the field's label rather than by `<label for>`
 * @property {ListCell} [cell] how a list's cell shows the value when the column names this widget
 *   (a plain function called per row; without it the cell shows the type's usual text)
 *
 * @typedef {(cell: {value: unknown, record: Record<string, unknown>, field: import('./fields/field-props.js').FieldInfo, lang: string}) => any} ListCell
 *
 * @typedef {object} FieldEntry
 * @property {string} name
 * @property {FieldComponent} component
 * @property {readonly string[] | null} types
 * @property {boolean} readonlyOnly
 * @property {boolean} group
 * @property {ListCell | null} cell
 */

/** @type {Map<string, FieldEntry>} */
const fields = new Map();
/** @type {Map<string, ChatterPart[]>} */
const chatterParts = new Map();

/** @typedef {(props: {model: string, id: number}) => any} ChatterPart */

export const registry = Object.freeze({
  /**
   * Registers a field widget under `name`.
   * @param {string} name @param {FieldComponent} component @param {FieldOptions} [options]
   */
  field(name, component, options = {}) {
    if (typeof name !== 'string' || !name) throw new TypeError('registry.field: the name must be a non-empty string');
    if (typeof component !== 'function') throw new TypeError(`registry.field('${name}'): the component must be a function`);
    fields.set(name, Object.freeze({
      name,
      component,
      types: options.types ? Object.freeze([...options.types]) : null,
      readonlyOnly: Boolean(options.readonlyOnly),
      group: Boolean(options.group),
      cell: typeof options.cell === 'function' ? options.cell : null,
    }));
  },

  /**
   * The widget registered under `name`, or null.
   * @param {string} name
   * @returns {FieldEntry | null}
   */
  fieldEntry(name) {
    return fields.get(name) ?? null;
  },

  /** The names of the registered field widgets, in registration order. */
  fieldNames() {
    return [...fields.keys()];
  },

  /**
   * Adds `component` to the chatter of `model`'s forms, above the thread (the live chat's "… is
   * typing"), given the record's `model` and `id`.
   * @param {string} model @param {ChatterPart} component
   */
  chatterPart(model, component) {
    if (typeof component !== 'function') throw new TypeError(`registry.chatterPart('${model}'): the component must be a function`);
    chatterParts.set(model, [...(chatterParts.get(model) ?? []), component]);
  },

  /** The chatter parts of `model`, in registration order. @param {string} model @returns {readonly ChatterPart[]} */
  chatterParts(model) {
    return chatterParts.get(model) ?? [];
  },
});
