import { Model, fields } from 'fieldforge';
import { publicKey, renew, subscribe, unsubscribe, type Subscribed } from '../push/subscriptions.js';

/**
 * A browser's Web Push subscription (CONTRACTS C5 "Web Push"): where the push service of one
 * browser of one user receives pushes, and the keys its payloads are encrypted for. One row per
 * endpoint: subscribing again updates it. Only the platform reads and writes these rows (the
 * `/api/push/*` routes, the outbox): no model access is granted on them.
 */
export class PushSubscription extends Model {
  static override _verbose_name = 'Push subscription';
  static override _rec_name = 'endpoint';
  static override _unique_together = [['endpoint']];
  static override fields = {
    user: fields.ManyToOne('User', { required: true, on_delete: 'CASCADE', index: true }),
    endpoint: fields.Char({ max_length: 2048, required: true }),
    p256dh: fields.Char({ max_length: 255, required: true, internal: true }),
    auth: fields.Char({ max_length: 255, required: true, internal: true }),
    // The database key the browser subscribed with: a subscription made with another key (a
    // restored copy of another database) is refused by its push service and removed then.
    vapid_public_key: fields.Char({ max_length: 255, internal: true }),
    // SHA-256 of the token the browser's service worker renews this row with when the browser
    // renews the subscription and the person's session has long expired (odoo PR #275954).
    renewal_token_hash: fields.Char({ max_length: 64, internal: true, index: true }),
  };

  /** The database's VAPID public key (`GET /api/push/key`). */
  static public_key(): Promise<{ public_key: string }> {
    return publicKey();
  }

  /** Stores the caller's browser subscription (`POST /api/push/subscribe`). */
  static subscribe(body: Record<string, unknown>): Promise<Subscribed> {
    return subscribe(body);
  }

  /** Re-points the subscription of a renewal token at the browser's renewed one (`POST /push/renew`, no session). */
  static renew(body: Record<string, unknown>): Promise<{ renewed: true }> {
    return renew(body);
  }

  /** Forgets one of the caller's subscriptions (`POST /api/push/unsubscribe`). */
  static unsubscribe(body: Record<string, unknown>): Promise<{ unsubscribed: number }> {
    return unsubscribe(body);
  }
}
