import { Model, fields } from 'fieldforge';

/** A label to classify contacts with (Customer, Supplier, VIP…); `contacts` is the reverse of Contact.tags. */
export class ContactTag extends Model {
  static override _verbose_name = 'Contact Tag';
  static override _order_by = ['name ASC'];
  // One tag per name, so picking "VIP" always means the same tag.
  static override _unique_together = [['name']];
  static override fields = {
    name: fields.Char({ required: true, max_length: 64 }),
    color: fields.Integer({ default: 0, description: 'Index in the UI colour palette' }),
  };
}
