import { Model, fields } from 'fieldforge';

/** Read/write/create/delete rights of one group on one model; no matching row means denied. */
export class ModelAccess extends Model {
  static override _verbose_name = 'Model Access';
  static override _order_by = ['model ASC', 'name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    model: fields.Char({ required: true, index: true, description: 'Model name, e.g. Task' }),
    group: fields.ManyToOne('Group', { related_name: 'model_access', on_delete: 'CASCADE' }),
    read_perm: fields.Boolean({ default: false }),
    write_perm: fields.Boolean({ default: false }),
    create_perm: fields.Boolean({ default: false }),
    delete_perm: fields.Boolean({ default: false }),
  };
}
