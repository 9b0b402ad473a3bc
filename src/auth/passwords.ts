/** Password hashing with Argon2id (the library's defaults: ~17 ms per hash on this machine). */
import type * as Argon2 from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';

/**
 * `@node-rs/argon2`, loaded on first use (here and by `backup-codes.ts`): ~18 ms and ~10 MiB of
 * the start, and API-key requests never hash. A failed import rejects with its own error.
 */
let argon2: typeof Argon2 | undefined;
let argon2Loading: Promise<typeof Argon2> | undefined;

export function loadArgon2(): Promise<typeof Argon2> {
  return (argon2Loading ??= import('@node-rs/argon2').then((module) => (argon2 = module)));
}

export function hashPassword(password: string): Promise<string> {
  return argon2 ? argon2.hash(password) : loadArgon2().then(({ hash }) => hash(password));
}

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (!stored) return false;
  // Outside the try: a failed import is an error, not a wrong password.
  const { verify } = argon2 ?? (await loadArgon2());
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** A random password for generated admin logins (20 characters, URL-safe). */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}
