/** Password hashing with Argon2id (the library's defaults: ~17 ms per hash on this machine). */
import { randomBytes } from 'node:crypto';
import { LazyModule } from '../lazy-module.js';

/**
 * `@node-rs/argon2`, loaded on first use (here and by `backup-codes.ts`): ~18 ms and ~10 MiB of
 * the start, and API-key requests never hash. A failed import rejects with its own error.
 */
export const argon2 = new LazyModule(() => import('@node-rs/argon2'));

export async function hashPassword(password: string): Promise<string> {
  return (argon2.loaded ?? (await argon2.load())).hash(password);
}

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (!stored) return false;
  // Outside the try: a failed import is an error, not a wrong password.
  const { verify } = argon2.loaded ?? (await argon2.load());
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
