import { Model, fields } from 'fieldforge';

export class UiMenu extends Model {
  static override _verbose_name = 'Menu';
  static override _order_by = ['sequence ASC', 'name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    sequence: fields.Integer({ default: 10 }),
    icon: fields.Char({ max_length: 64 }),
    parent: fields.ManyToOne('UiMenu', { related_name: 'children', on_delete: 'CASCADE' }),
    action: fields.ManyToOne('WindowAction', { on_delete: 'SET NULL' }),
  };
}
