import { Model, fields } from 'fieldforge';

/**
 * The database's VAPID key pair (RFC 8292), generated at install: pushes are signed with it and
 * browsers subscribe with its public half. It belongs to the database, so a restored copy keeps its
 * own key and its subscriptions keep working. Only the platform reads it.
 */
export class PushKey extends Model {
  static override _verbose_name = 'Push key';
  static override _rec_name = 'public_key';
  static override fields = {
    public_key: fields.Char({ max_length: 255, required: true }),
    private_key: fields.Char({ max_length: 255, required: true, internal: true }),
  };
}
