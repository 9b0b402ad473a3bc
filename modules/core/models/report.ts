import { Model, ValidationError, fields } from 'fieldforge';
import type { ModelChange } from 'fieldforge';

/**
 * A printable document of a model's records (CONTRACTS C1 "Reports"), declared by a module as a
 * data record: a LiquidJS `template` (HTML, a path inside the module directory named by the
 * identifier's module — `sales.report_sale_order` → `modules/sales/<template>`), a `filename`
 * template without extension, and the `format` answered: `pdf` (printed by headless Chromium) or
 * `html`. `POST /api/generate_report` renders it; the platform reads these rows itself, so callers
 * need a right on the printed model, not on `Report`.
 */
export class Report extends Model {
  static override _verbose_name = 'Report';
  static override _order_by = ['model ASC', 'name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    model: fields.Char({ required: true, index: true, description: 'Model whose records it prints, e.g. SaleOrder' }),
    template: fields.Char({ required: true, description: 'LiquidJS HTML template, relative to the module directory' }),
    filename: fields.Char({ description: 'Document name without extension, a LiquidJS template over `record` (default: the report name)' }),
    format: fields.Selection({ choices: [['pdf', 'PDF'], ['html', 'HTML']], default: 'pdf', required: true }),
  };

  declare name: string;
  declare model: string;
  declare template: string;
  declare filename: string | null;
  declare format: 'pdf' | 'html';

  /** A template is a path inside its module: never absolute, never climbing out with `..`. */
  static override async _check_change(change: ModelChange): Promise<void> {
    if (change.op === 'delete') return;
    const values = change.op === 'create' ? change.vals : [change.vals];
    for (const vals of values) {
      const template = vals.template;
      if (typeof template !== 'string') continue;
      if (template.startsWith('/') || template.includes('\\') || template.split('/').includes('..')) {
        throw new ValidationError(`Report template '${template.slice(0, 80)}' must be a path inside its module directory (no leading '/', no '..')`);
      }
    }
  }
}
