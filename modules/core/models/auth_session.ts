import { Model, fields } from 'fieldforge';

/**
 * A signed-in session: what its access tokens (`sid` claim) and its refresh-token family belong
 * to. Revoking it (logout, or reuse of a rotated refresh token) refuses all of them at once. No
 * group has rights on it: only the platform reads and writes sessions.
 */
export class AuthSession extends Model {
  static override _verbose_name = 'Session';
  static override _order_by = ['id DESC'];
  static override fields = {
    user: fields.ManyToOne('User', { required: true, on_delete: 'CASCADE', index: true }),
    expires_at: fields.Datetime({ required: true, description: 'End of the refresh-token family' }),
    revoked_at: fields.Datetime(),
    revoked_reason: fields.Char({ max_length: 64 }),
  };
}

/** One refresh token of a session's family, stored hashed; used once (rotation). */
export class AuthRefreshToken extends Model {
  static override _verbose_name = 'Refresh Token';
  static override fields = {
    session: fields.ManyToOne('AuthSession', { required: true, on_delete: 'CASCADE', index: true }),
    token_hash: fields.Char({ max_length: 64, required: true, internal: true, index: true }),
    used_at: fields.Datetime(),
  };
}

/** The first step of a sign-in with a second factor: a short-lived, single-use pending token. */
export class AuthPendingLogin extends Model {
  static override _verbose_name = 'Pending Sign-in';
  static override fields = {
    user: fields.ManyToOne('User', { required: true, on_delete: 'CASCADE' }),
    token_hash: fields.Char({ max_length: 64, required: true, internal: true, index: true }),
    expires_at: fields.Datetime({ required: true }),
    used_at: fields.Datetime(),
  };
}
