/**
 * A signed-in person changes their own password (run elevated on the caller's own user, like the
 * second factor's enrolment): the current password proves it is them and not someone at an
 * unlocked screen, the new one must pass the password rule (`password-rule.ts`), and the person's
 * other sessions are revoked — whoever knew the old password is signed out everywhere but here.
 */
import { sql } from '../db/sql-fragment.js';
import { BadRequest, ValidationError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';
import { writeRecords } from '../orm/write/write-records.js';
import { checkPasswordRule } from './password-rule.js';
import { verifyPassword } from './passwords.js';

/** A refusal about one input: `field` names it (`current_password`, `new_password`) for the form. */
export function inputError(message: string, field: string): ValidationError {
  return new ValidationError(message, { field });
}

export async function changeOwnPassword(uid: number, sessionId: number, current: unknown, next: unknown): Promise<{ changed: true; other_sessions_revoked: number }> {
  const { registry, trx } = currentEnv();
  const { rows: [user] } = await sql<{ email: string | null; password_hash: string | null }>`
    SELECT email, password_hash FROM ${sql.table(registry.meta('User').table)} WHERE id = ${uid} FOR UPDATE`.execute(trx);
  if (!user) throw new BadRequest('No such user');
  if (typeof current !== 'string' || !current) throw inputError('Enter your current password.', 'current_password');
  if (!(await verifyPassword(user.password_hash, current))) throw inputError('The current password is not correct.', 'current_password');
  try {
    checkPasswordRule(next, user.email);
  } catch (err) {
    if (err instanceof ValidationError) throw inputError(err.message, 'new_password');
    throw err;
  }
  if (next === current) throw inputError('The new password must differ from the current one.', 'new_password');
  // Through the field's setter: the rule is checked again and an Argon2id hash stored, as on every path.
  await writeRecords(registry.meta('User'), [uid], { password: next });
  const sessions = registry.meta('AuthSession');
  const others = await new QuerySet(sessions).filter({ user: uid, revoked_at: null, id__not: sessionId }).ids();
  if (others.length) await writeRecords(sessions, others, { revoked_at: new Date().toISOString(), revoked_reason: 'password changed' });
  return { changed: true, other_sessions_revoked: others.length };
}
