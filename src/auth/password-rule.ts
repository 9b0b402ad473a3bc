/**
 * The password rule, checked wherever a password is set (not at sign-in, so older passwords keep
 * working). Following NIST SP 800-63B it asks for length and rejects known passwords. It has no
 * composition rules. A password must be:
 *
 * 1. a string;
 * 2. at least `MIN_PASSWORD_LENGTH` (12) characters, counted in Unicode code points, so an emoji
 *    counts as one character and not as two UTF-16 units;
 * 3. at most `MAX_PASSWORD_LENGTH` (1024) code points. Argon2 hashes whatever it is given, and an
 *    unbounded password would be a cheap way to burn server CPU;
 * 4. not the account's e-mail address, nor its local part (before the last `@`). Both sides are
 *    trimmed and compared case-insensitively;
 * 5. not one of the ~49k common passwords of zxcvbn-ts (`passwords-common`), compared
 *    case-insensitively.
 *
 * A violation throws a `ValidationError` (400) whose message names the broken rule.
 */
import { createRequire } from 'node:module';
import type * as LanguageCommon from '@zxcvbn-ts/language-common';
import { ValidationError } from '../errors.js';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

export function checkPasswordRule(password: unknown, email?: string | null): void {
  if (typeof password !== 'string') throw new ValidationError('Password must be a string.');
  // Each code point is at most two UTF-16 units, so a longer string is too long without counting.
  const length = password.length > 2 * MAX_PASSWORD_LENGTH ? Infinity : codePoints(password);
  if (length < MIN_PASSWORD_LENGTH) throw new ValidationError(`Password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
  if (length > MAX_PASSWORD_LENGTH) throw new ValidationError(`Password must be at most ${MAX_PASSWORD_LENGTH} characters long.`);
  const lower = password.toLowerCase();
  if (isEmailOrLocalPart(lower.trim(), email)) {
    throw new ValidationError('Password must not be the e-mail address, nor the part of it before the @.');
  }
  if (commonPasswords().has(lower)) throw new ValidationError('Password is too common; choose one that is harder to guess.');
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function isEmailOrLocalPart(password: string, email: string | null | undefined): boolean {
  if (typeof email !== 'string') return false;
  const address = email.trim().toLowerCase();
  if (!address) return false;
  const at = address.lastIndexOf('@');
  return password === address || (at > 0 && password === address.slice(0, at));
}

let common: Set<string> | undefined;

/**
 * Built on first use. It holds only entries long enough to pass the length check, since shorter
 * ones are refused before this lookup. That is a few hundred strings instead of 49k.
 *
 * The dictionary package is loaded here, not at start: ~21 ms and ~13 MiB, and only setting a
 * password needs it. `require`, because `checkPasswordRule` is synchronous (part of the public
 * API); the package is CommonJS (its `main`), so this is the module `import` would load.
 */
function commonPasswords(): Set<string> {
  if (common) return common;
  const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as typeof LanguageCommon;
  common = new Set(
    dictionary['passwords-common'].filter((entry) => codePoints(entry) >= MIN_PASSWORD_LENGTH).map((entry) => entry.toLowerCase()),
  );
  return common;
}
