import { Model, fields } from 'fieldforge';

/**
 * The durable outbox of Web Push (issue 27 item 5): one row per push to send, written in the same
 * transaction as the message it tells of — a rolled-back message leaves no row, and a row left by a
 * crash between the commit and the send is sent by the next drain. `claimed_until` is when a
 * drain's claim lapses: a drain that died mid-send leaves its rows to the next one.
 */
export class PushOutbox extends Model {
  static override _verbose_name = 'Push outbox';
  static override fields = {
    subscription: fields.ManyToOne('PushSubscription', { required: true, on_delete: 'CASCADE' }),
    payload: fields.Json({ required: true }),
    attempts: fields.Integer({ default: 0, required: true }),
    claimed_until: fields.Datetime({ index: true }),
  };
}
