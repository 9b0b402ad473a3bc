import { Model, fields } from 'fieldforge';

/** A module installed in this database (its `identifier` is the module identifier). */
export class Module extends Model {
  static override _verbose_name = 'Module';
  static override _order_by = ['name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    category: fields.Char(),
    description: fields.Text(),
    icon: fields.Char({ max_length: 64 }),
    color: fields.Char({ max_length: 16 }),
    dependencies: fields.Json({ readonly: true }),
    state: fields.Selection({ choices: ['installed', 'installing'], default: 'installed', readonly: true }),
    installed_date: fields.Datetime({ readonly: true }),
    updated_module_date: fields.Datetime({ readonly: true }),
  };
}
