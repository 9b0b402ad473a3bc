import { Model, fields } from 'fieldforge';

/**
 * A saved choice of export columns for one model (Odoo's `ir.exports`): the field paths in
 * order (`customer/name`, `order_lines/product`) and whether the export is import-compatible.
 * The web client's export dialog lists, applies, saves and deletes them. Presets are personal:
 * the record rule in `security/access_export_preset.yaml` shows and lets change only the
 * caller's own (`created_by`), administrators included.
 */
export class ExportPreset extends Model {
  static override _verbose_name = 'Export Preset';
  static override _order_by = ['name ASC', 'id ASC'];
  static override fields = {
    name: fields.Char({ required: true, max_length: 120 }),
    /** The model the preset exports, e.g. `ProjectTask`. */
    model: fields.Char({ required: true, index: true, max_length: 120 }),
    /** The export's columns: an array of field paths, in column order. */
    export_fields: fields.Json({ required: true }),
    import_compatible: fields.Boolean({ default: false }),
  };
}
