import { Model, fields } from 'fieldforge';

/**
 * One contact following one record (spec §2.6): followers are told of the record's messages. A
 * follower row belongs to its record: it is read by whoever may read the record.
 */
export class Followers extends Model {
  static override _verbose_name = 'Follower';
  static override _order_by = ['id ASC'];
  static override _owned_by = { model: 'model', record: 'document' };
  static override _unique_together = [['model', 'document', 'contact']];
  static override fields = {
    model: fields.Char({ max_length: 128, required: true }),
    document: fields.Integer({ required: true }),
    contact: fields.ManyToOne('Contact', { required: true, on_delete: 'CASCADE' }),
  };
}
