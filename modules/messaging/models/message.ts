import { Model, fields } from 'fieldforge';
import type { Contact } from '../../contacts/models/contact.js';
import { createMessage, type CreateMessageOptions } from '../notify/create-message.js';
import { notifyRecordFollowers } from '../notify/notify-followers.js';
import { recordFollowers } from '../thread/record-followers.js';
import { setNotifiedContacts, type RecordsOrIds } from '../notify/notified-contacts.js';
import { notificationPayload, type NotificationPayload } from '../notify/notification-payload.js';
import { sendActivityUpdate } from '../notify/activity-update.js';

/**
 * A message on a record's thread (spec §2.6): a public `comment`, an internal `note` or a system
 * `notification`, written by a contact. `content` is HTML sanitised on write. A message belongs to
 * its record (`model`, `document`): whoever may read the record may read its messages, nobody else.
 *
 * The server-side API is spec §6.5 to the letter: after a bare create, `message.notify_record_followers()`
 * once; `Message.create_message({…, send: true})` does both.
 */
export class Message extends Model {
  static override _verbose_name = 'Message';
  static override _order_by = ['id DESC'];
  static override _rec_name = 'record_name';
  static override _owned_by = { model: 'model', record: 'document' };
  static override fields = {
    content: fields.Html({ label: 'Content' }),
    author: fields.ManyToOne('Contact', { on_delete: 'SET NULL' }),
    // Who wrote it when that is not a contact (a live-chat visitor): shown in its place.
    author_name: fields.Char({ max_length: 120, label: 'Author name' }),
    message_type: fields.Selection({
      choices: [['comment', 'Message'], ['note', 'Internal note'], ['notification', 'System notification']],
      default: 'comment',
      required: true,
    }),
    model: fields.Char({ max_length: 128, required: true }),
    document: fields.Integer({ required: true }),
    // The record's name when the message was written: the feed lists it without reading every record.
    record_name: fields.Char({ max_length: 255 }),
    mentions: fields.ManyToMany('Contact', { label: 'Mentioned contacts' }),
    notified_contacts: fields.ManyToMany('Contact', {
      label: 'Notified contacts',
      through: 'FkMessageNotifiedContact',
      through_fields: ['message', 'contact'],
    }),
  };

  declare content: string | null;
  declare message_type: 'comment' | 'note' | 'notification';
  declare model: string;
  declare document: number;
  declare record_name: string | null;
  declare author: Promise<Contact | null>;

  /** Creates a message on `document` of `model` and, unless `send: false`, notifies its audience. */
  static async create_message(options: CreateMessageOptions): Promise<Message> {
    return (await createMessage(options)) as Message;
  }

  /** The contacts following `document` of `model` (records). */
  static async record_followers(model: string, document: number): Promise<Contact[]> {
    return (await recordFollowers(model, document)) as Contact[];
  }

  /** Links `contacts` (records or ids, the author left out) as notified by `message`; sends nothing. */
  static async set_notified_contacts(
    message: Message | number, contacts: RecordsOrIds, author: Contact | number | null, model: string, document: number,
  ): Promise<number> {
    return setNotifiedContacts(message, contacts, author, model, document);
  }

  /** C4's `send_activity_update`: an `activity_update` frame to every socket of `user_id` after commit. */
  static send_activity_update(user_id: number, payload: Record<string, unknown>): void {
    sendActivityUpdate(user_id, payload);
  }

  /** Resolves the audience, links it and pushes to it (a second call pushes again). */
  async notify_record_followers(): Promise<void> {
    await notifyRecordFollowers(this);
  }

  notification_payload(): Promise<NotificationPayload> {
    return notificationPayload(this);
  }
}
