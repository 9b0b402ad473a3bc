import { Model, fields } from 'fieldforge';

export class Company extends Model {
  static override _verbose_name = 'Company';
  static override _order_by = ['name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    parent: fields.ManyToOne('Company', { related_name: 'children', on_delete: 'SET NULL' }),
    active: fields.Boolean({ default: true }),
  };
}
