/**
 * The statements of signing in and of session tokens, run elevated in the sign-in's or the
 * refresh's unit of work. Each is one statement because it must decide atomically: a pending
 * token or a refresh token is spent by the same statement that finds it, so of two concurrent
 * attempts with one token exactly one wins (a read, then a write, would let both pass). They run on
 * the unit of work's transaction as they are: no principal, no request guard, nothing to flush.
 */
import { sql } from '../../db/sql-fragment.js';
import { currentEnv } from '../env.js';

/** The person an e-mail signs in as. */
export interface SignInUser {
  id: number;
  password_hash: string | null;
  totp_enabled: boolean;
}

/** The active user, not a service account, with this e-mail (case-insensitive); the lowest id when several have it. */
export async function signInUser(email: string): Promise<SignInUser | undefined> {
  const { registry, work: { trx } } = currentEnv();
  const { rows } = await sql<SignInUser>`SELECT id, password_hash, totp_enabled FROM ${sql.table(registry.meta('User').table)}
    WHERE lower(email) = lower(${email}) AND active IS TRUE AND is_service_account IS NOT TRUE
    ORDER BY id LIMIT 1`.execute(trx);
  return rows[0];
}

/** Spends the pending sign-in with this token hash if it is unused and unexpired; its user, else undefined. */
export async function spendPendingLogin(tokenHash: string): Promise<number | undefined> {
  const { registry, work: { trx } } = currentEnv();
  const { rows } = await sql<{ user_id: number }>`UPDATE ${sql.table(registry.meta('AuthPendingLogin').table)}
    SET used_at = now() WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now()
    RETURNING user_id`.execute(trx);
  return rows[0]?.user_id;
}

/** What marking a refresh token used found: its session, whether it was used before, and whether the session still holds. */
export interface RotatedToken {
  session_id: number;
  was_used: boolean;
  user_id: number;
  /** The session is not revoked or expired, and its user is active. */
  live: boolean;
}

/**
 * Marks the refresh token with this hash used (keeping the first `used_at`); undefined when no
 * token has it. FOR UPDATE: a concurrent rotation of the same token waits, then sees it used.
 */
export async function rotateRefreshToken(tokenHash: string): Promise<RotatedToken | undefined> {
  const { registry, work: { trx } } = currentEnv();
  const tokens = sql.table(registry.meta('AuthRefreshToken').table);
  const { rows } = await sql<RotatedToken>`
    WITH old AS (SELECT id, used_at FROM ${tokens} WHERE token_hash = ${tokenHash} FOR UPDATE)
    UPDATE ${tokens} t SET used_at = COALESCE(old.used_at, now())
    FROM old, ${sql.table(registry.meta('AuthSession').table)} s JOIN ${sql.table(registry.meta('User').table)} u ON u.id = s.user_id
    WHERE t.id = old.id AND s.id = t.session_id
    RETURNING t.session_id, old.used_at IS NOT NULL AS was_used, s.user_id,
      (s.revoked_at IS NULL AND s.expires_at > now() AND u.active IS TRUE) AS live`.execute(trx);
  return rows[0];
}
