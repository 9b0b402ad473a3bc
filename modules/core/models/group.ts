import { Model, fields } from 'fieldforge';

/** A set of users that access rights (ModelAccess) are granted to. */
export class Group extends Model {
  static override _verbose_name = 'Group';
  static override _order_by = ['category ASC', 'name ASC'];
  static override fields = {
    name: fields.Char({ required: true }),
    category: fields.Char({ description: 'Module category identifier the group belongs to' }),
  };
}
