/** Password hashing with Argon2id (the library's defaults: ~17 ms per hash on this machine). */
import { hash, verify } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (!stored) return false;
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
