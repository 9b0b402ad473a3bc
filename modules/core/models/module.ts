import { Model, fields } from 'fieldforge';

/**
 * A module of this database (its `identifier` is the module identifier): an installed one, or one
 * of the catalogue an administrator marked for installation (`state` `uninstalled`, `pending`
 * `install`). `pending` is what the next start applies (`fieldforge serve`, spec §2.7: "a restart
 * is needed first if the server was already running"): `install` or `upgrade`, cleared once done
 * (`src/platform/pending-modules.ts`). Only `installed` modules make up the database's registry.
 */
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
    state: fields.Selection({ choices: [['installed', 'Installed'], ['installing', 'Installing'], ['uninstalled', 'Not installed']], default: 'installed', readonly: true }),
    pending: fields.Selection({ choices: [['install', 'To install'], ['upgrade', 'To upgrade']], readonly: true, label: 'Pending action', description: 'Applied at the next start of the server' }),
    installed_date: fields.Datetime({ readonly: true }),
    updated_module_date: fields.Datetime({ readonly: true }),
  };
}
