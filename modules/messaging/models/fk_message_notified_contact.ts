import { Model, fields } from 'fieldforge';
import { feed, markRead, unreadCount, type FeedItem, type FeedQuery, type ReadScope } from '../feed/activity-stream.js';

/**
 * The junction behind `Message.notified_contacts` (spec §2.6): a message notified to a contact,
 * `read` false until the contact marks it read. It repeats the message's record (`model`,
 * `document`) so that a row belongs to that record — rows on records the reader can no longer
 * read are neither counted nor listed — and so that marking a record's messages read is one
 * indexed UPDATE. A global rule keeps each principal to its own rows.
 */
export class FkMessageNotifiedContact extends Model {
  static override _verbose_name = 'Notified contact';
  static override _order_by = ['message DESC'];
  static override _owned_by = { model: 'model', record: 'document' };
  // Contact first: the unique index is also the feed's (a contact's rows newest first) and the
  // contact's foreign-key index, one index where three would cost every notified row.
  static override _unique_together = [['contact', 'message']];
  static override fields = {
    message: fields.ManyToOne('Message', { required: true, on_delete: 'CASCADE' }),
    contact: fields.ManyToOne('Contact', { required: true, on_delete: 'CASCADE' }),
    read: fields.Boolean({ default: false, required: true }),
    read_date: fields.Datetime(),
    model: fields.Char({ max_length: 128, required: true }),
    document: fields.Integer({ required: true }),
  };

  /** The caller's unread rows on records it may read (`GET /api/activity-stream/unread-count`). */
  static unread_count(): Promise<number> {
    return unreadCount();
  }

  /** The caller's feed, newest first (`POST /api/activity-stream`). */
  static feed(query: FeedQuery): Promise<FeedItem[]> {
    return feed(query);
  }

  /** Marks the caller's rows of a scope read (`POST /api/activity-stream/read`) → how many turned. */
  static mark_read(scope: ReadScope): Promise<number> {
    return markRead(scope);
  }
}
