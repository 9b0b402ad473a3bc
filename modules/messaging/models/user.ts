import { UserError, ValidationError, currentEnv, extendModel, fields, withEnv, QuerySet, type ModelChangeDone, type ModelClass } from 'fieldforge';
import { ensureUserContacts } from '../thread/user-contacts.js';

const PREFERENCES = [['realtime', 'In the app and as push notifications'], ['inbox', 'Only in the inbox']] as [string, string][];

/**
 * Messaging's side of a user (CONTRACTS C5): every user has a contact, created with the user, and a
 * `notification_preference` — `realtime` (the socket and Web Push) or `inbox` (the feed only) —
 * that a user sets for themselves from My profile.
 */
export const UserMessaging = extendModel('User', (Base: ModelClass) => {
  const Extended = class extends Base {
    static override _api_methods = [...(Base._api_methods ?? []), 'set_my_notification_preference'];
    static override fields = {
      notification_preference: fields.Selection({ choices: PREFERENCES, default: 'realtime', required: true, label: 'Notifications' }),
    };

    static override async _after_change(change: ModelChangeDone): Promise<void> {
      await super._after_change?.(change);
      if (change.op === 'create') await ensureUserContacts(change.ids);
    }

    /** `{inputs: {notification_preference}}`: the caller's own preference, whatever their rights on User. */
    static async set_my_notification_preference(inputs: Record<string, unknown> = {}): Promise<{ notification_preference: string }> {
      const { uid, registry } = currentEnv();
      if (!uid) throw new UserError('set_my_notification_preference needs a signed-in user');
      const value = inputs.notification_preference;
      if (typeof value !== 'string' || !PREFERENCES.some(([key]) => key === value)) {
        throw new ValidationError("notification_preference must be 'realtime' or 'inbox'", { field: 'notification_preference' });
      }
      await withEnv({ su: true }, () => new QuerySet(registry.meta('User')).with_archived().filter({ id: uid }).update({ notification_preference: value }));
      return { notification_preference: value };
    }
  };
  return Extended as unknown as ModelClass;
});
