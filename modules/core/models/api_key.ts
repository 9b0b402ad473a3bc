import { Model, fields } from 'fieldforge';

/**
 * An API key: only its SHA-256 hash and a display prefix are stored; the key is shown once. Keys
 * are made, listed and revoked through `/api/api-keys` (src/auth/api-keys.ts); through the generic
 * API only the name can change — what a key opens (its account, expiry, scopes) is not rewritable.
 */
export class ApiKey extends Model {
  static override _verbose_name = 'API Key';
  static override _order_by = ['created_date DESC'];
  static override fields = {
    name: fields.Char({ required: true }),
    prefix: fields.Char({ max_length: 16, readonly: true }),
    key_hash: fields.Char({ max_length: 64, internal: true, index: true }),
    service_account: fields.ManyToOne('ServiceAccount', { related_name: 'api_keys', required: true, on_delete: 'CASCADE', readonly: true }),
    expires_at: fields.Datetime({ readonly: true }),
    last_used_at: fields.Datetime({ readonly: true }),
    revoked_at: fields.Datetime({ readonly: true }),
    /** `[{model, perms}]` narrowing the key below its account's groups; null = the account's access. */
    scopes: fields.Json({ readonly: true }),
  };
}
