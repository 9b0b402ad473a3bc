/**
 * Enrolment in the second factor for a signed-in person (run elevated on the caller's own user):
 * `setup` stores a fresh secret (sealed) without enabling it and returns what an authenticator app
 * needs; `enable` switches it on once a code from that app proves the secret was taken, and
 * returns ten backup codes — shown this once, stored as Argon2id hashes; `disable` needs a current
 * code or a backup code.
 */
import { sql } from '../db/sql-fragment.js';
import { BadRequest } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import { writeRecords } from '../orm/write/write-records.js';
import { generateBackupCodes } from './backup-codes.js';
import { openSecret, sealSecret } from './secret-box.js';
import { checkSecondFactor } from './sign-in.js';
import { generateTotpSecret, matchTotp, totpQrSvg, totpUri } from './totp.js';

export const TOTP_ISSUER = 'FieldForge';

async function enrolmentOf(uid: number) {
  const { registry, trx } = currentEnv();
  const { rows } = await sql<{ email: string | null; name: string; totp_enabled: boolean; totp_secret: string | null }>`
    SELECT email, name, totp_enabled, totp_secret FROM ${sql.table(registry.meta('User').table)} WHERE id = ${uid} FOR UPDATE`.execute(trx);
  if (!rows[0]) throw new BadRequest('No such user');
  return rows[0];
}

export async function setupSecondFactor(uid: number, secret: string): Promise<{ secret: string; otpauth_uri: string; qr_svg: string }> {
  const user = await enrolmentOf(uid);
  if (user.totp_enabled) throw new BadRequest('The second factor is already enabled; disable it first to enrol again');
  const totpSecret = generateTotpSecret();
  await writeRecords(currentEnv().registry.meta('User'), [uid], { totp_secret: sealSecret(totpSecret, secret), totp_last_step: null });
  const uri = totpUri(totpSecret, { issuer: TOTP_ISSUER, label: user.email ?? user.name });
  return { secret: totpSecret, otpauth_uri: uri, qr_svg: await totpQrSvg(uri) };
}

export async function enableSecondFactor(uid: number, code: unknown, secret: string): Promise<{ backup_codes: string[] }> {
  const user = await enrolmentOf(uid);
  if (user.totp_enabled) throw new BadRequest('The second factor is already enabled');
  const totpSecret = user.totp_secret ? openSecret(user.totp_secret, secret) : null;
  if (!totpSecret) throw new BadRequest('Start with POST /auth/2fa/setup');
  const step = matchTotp(totpSecret, code);
  if (step === null) throw new BadRequest('Invalid code: enter the 6-digit code your authenticator app shows now');
  const { codes, hashes } = await generateBackupCodes();
  await writeRecords(currentEnv().registry.meta('User'), [uid], { totp_enabled: true, totp_last_step: step, backup_code_hashes: hashes });
  return { backup_codes: codes };
}

export async function disableSecondFactor(uid: number, code: unknown, secret: string): Promise<{ disabled: true }> {
  const user = await enrolmentOf(uid);
  if (!user.totp_enabled) throw new BadRequest('The second factor is not enabled');
  if (!(await checkSecondFactor(uid, code, secret))) throw new BadRequest('Invalid code: enter a current code or an unused backup code');
  await writeRecords(currentEnv().registry.meta('User'), [uid], {
    totp_enabled: false, totp_secret: null, totp_last_step: null, backup_code_hashes: null,
  });
  return { disabled: true };
}
