import { Model, fields } from 'fieldforge';

/** A label for orders; `orders` is the reverse of SaleOrder.tags. */
export class SaleTag extends Model {
  static override _verbose_name = 'Sales Tag';
  static override _order_by = ['name ASC'];
  static override _unique_together = [['name']];
  static override fields = {
    name: fields.Char({ required: true, max_length: 64 }),
    color: fields.Integer({ default: 0, description: 'Index in the UI colour palette' }),
  };
}
