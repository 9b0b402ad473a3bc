import { Model, fields } from 'fieldforge';

/**
 * A link to the database's API reference (`/api-docs`, spec §1 and §5): whoever holds its token
 * may read the OpenAPI document of this database — nothing else. Only the token's SHA-256 hash is
 * stored (in `token`); the token is shown once. Shares are made, listed and revoked through
 * `/api/api-docs-shares` (src/auth/api-docs-shares.ts); through the generic API only the name can
 * change — what a share opens (its token, expiry, whether it is active) is not rewritable, so a
 * revoked share stays revoked.
 */
export class ApiDocsShare extends Model {
  static override _verbose_name = 'API Reference Share';
  static override _order_by = ['created_date DESC', 'id DESC'];
  static override fields = {
    name: fields.Char({ required: true }),
    /** SHA-256 (hex) of the token; the token itself is never stored. */
    token: fields.Char({ max_length: 64, internal: true, index: true }),
    expires_at: fields.Datetime({ readonly: true }),
    /** False once revoked (`DELETE /api/api-docs-shares/{id}`): refused from the next request on. */
    active: fields.Boolean({ default: true, readonly: true }),
    last_used_at: fields.Datetime({ readonly: true }),
  };
}
