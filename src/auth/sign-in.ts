/**
 * Signing in with e-mail and password (spec §4.1, §5), run elevated in the sign-in's unit of work
 * once the ALTCHA check passed. An unknown e-mail and a wrong password give the same answer after
 * the same work (one Argon2id verification either way). With a second factor no session is issued:
 * a single-use pending token (5 minutes) is, and `completeSecondFactor` finishes the sign-in.
 */
import { randomBytes } from 'node:crypto';
import { sql } from '../db/sql-fragment.js';
import { currentEnv } from '../orm/env.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeRecords } from '../orm/write/write-records.js';
import { matchBackupCode } from './backup-codes.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { openSecret } from './secret-box.js';
import { hashToken, openSession, type SessionConfig, type SessionTokens } from './sessions.js';
import { matchTotp } from './totp.js';

export const PENDING_TOKEN_PREFIX = 'ffp_';
const PENDING_MINUTES = 5;

export interface SecondFactorRequired {
  message: string;
  '2fa_required': true;
  pending_token: string;
}

/** A hash to verify against when the e-mail is unknown, so both failures cost the same. */
let dummyHash: Promise<string> | null = null;

interface SignInUser {
  id: number;
  password_hash: string | null;
  totp_enabled: boolean;
}

/** The answer, or null when the e-mail or password is wrong (the caller answers 401). */
export async function signIn(email: string, password: string, config: SessionConfig): Promise<SessionTokens | SecondFactorRequired | null> {
  const { registry, trx } = currentEnv();
  const { rows } = await sql<SignInUser>`SELECT id, password_hash, totp_enabled FROM ${sql.table(registry.meta('User').table)}
    WHERE lower(email) = lower(${email.trim()}) AND active IS TRUE AND is_service_account IS NOT TRUE
    ORDER BY id LIMIT 1`.execute(trx);
  const user = rows[0];
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  const valid = await verifyPassword(user?.password_hash ?? (await dummyHash), password);
  if (!user || !user.password_hash || !valid) return null;
  if (!user.totp_enabled) return openSession(user.id, config);
  const pendingToken = PENDING_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  await createRecords(registry.meta('AuthPendingLogin'), [{
    user: user.id, token_hash: hashToken(pendingToken), expires_at: new Date(Date.now() + PENDING_MINUTES * 60_000).toISOString(),
  }]);
  return { message: 'Second factor required', '2fa_required': true, pending_token: pendingToken };
}

/**
 * Finishes a sign-in with a pending token and a TOTP or backup code. The pending token is spent by
 * this call whatever the outcome (one guess per solved ALTCHA), so a refusal is returned, not
 * thrown: the caller commits, then answers 401.
 */
export async function completeSecondFactor(pendingToken: unknown, code: unknown, config: SessionConfig): Promise<SessionTokens | null> {
  if (typeof pendingToken !== 'string' || !pendingToken.startsWith(PENDING_TOKEN_PREFIX) || pendingToken.length > 100) return null;
  const { registry, trx } = currentEnv();
  const { rows } = await sql<{ user_id: number }>`UPDATE ${sql.table(registry.meta('AuthPendingLogin').table)}
    SET used_at = now() WHERE token_hash = ${hashToken(pendingToken)} AND used_at IS NULL AND expires_at > now()
    RETURNING user_id`.execute(trx);
  const uid = rows[0]?.user_id;
  if (uid === undefined) return null;
  if (!(await checkSecondFactor(uid, code, config.secret))) return null;
  return openSession(uid, config);
}

/**
 * Checks a TOTP code (±1 step, never a step already used) or an unused backup code of an enrolled
 * user, and records its use. False when it matches neither.
 */
export async function checkSecondFactor(uid: number, code: unknown, secret: string): Promise<boolean> {
  const meta = currentEnv().registry.meta('User');
  const { rows } = await sql<{ active: boolean; totp_enabled: boolean; totp_secret: string | null; totp_last_step: number | null; backup_code_hashes: (string | null)[] | null }>`
    SELECT active, totp_enabled, totp_secret, totp_last_step, backup_code_hashes FROM ${sql.table(meta.table)} WHERE id = ${uid} FOR UPDATE`
    .execute(currentEnv().trx);
  const user = rows[0];
  if (!user?.active || !user.totp_enabled || !user.totp_secret) return false;
  const totpSecret = openSecret(user.totp_secret, secret);
  const step = totpSecret ? matchTotp(totpSecret, code, { lastUsedStep: user.totp_last_step }) : null;
  if (step !== null) {
    await writeRecords(meta, [uid], { totp_last_step: step });
    return true;
  }
  const hashes = user.backup_code_hashes ?? [];
  const used = await matchBackupCode(code, hashes);
  if (used === null) return false;
  await writeRecords(meta, [uid], { backup_code_hashes: hashes.map((h, i) => (i === used ? null : h)) });
  return true;
}
