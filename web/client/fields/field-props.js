/**
 * What every field widget receives (the form, a line of a lines table and a wizard dialog all
 * render widgets through `FieldWidget`). A widget shows `value` and reports a new one through
 * `onChange`; it never talks to the form's state directly.
 *
 * @typedef {object} FieldInfo a registry entry (`GET /api/get_registry`) with its `name`
 * @property {string} name
 * @property {string} type
 * @property {string} [label]
 * @property {boolean} [required]
 * @property {boolean} [readonly]
 * @property {boolean} [computed]
 * @property {number} [max_length]
 * @property {number} [precision]
 * @property {unknown} [default]
 * @property {[string, string][]} [choices]
 * @property {string} [related_model]
 * @property {string} [related_name]
 * @property {string} [currency_field]
 * @property {string} [filter]
 * @property {string} [description]
 * @property {boolean} [visible_setting_holds]
 *
 * @typedef {object} FieldProps
 * @property {string} id the control's element id (its `<label for>` points here)
 * @property {string} labelId the id of the visible label, for widgets that are a group of controls
 * @property {FieldInfo} field
 * @property {any} value the form's value (links as `{id, display_name}`, dates `YYYY-MM-DD`)
 * @property {(value: any) => void} onChange
 * @property {boolean} readonly
 * @property {boolean} invalid
 * @property {string} [describedBy] ids of the message (and help) describing the control
 * @property {string | null} lang
 * @property {Record<string, any>} record the whole record being edited (a Monetary's currency)
 * @property {Record<string, any>} properties the arch node's `properties` (`widget`, …)
 * @property {string} [ariaLabel] a label of its own when there is no visible `<label>` (a table cell)
 * @property {boolean} [compact] inside a table cell
 * @property {(message: string | null) => void} [onUnreadable] the widget holds typed text that is
 *   no value (`31/02/2026` in a Date): its message, or null once the text reads again, so the form
 *   shows it at the field and refuses to save (without it the widget only flags its input)
 */

export {};
