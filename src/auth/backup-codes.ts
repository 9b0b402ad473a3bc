/**
 * Backup codes for the second factor (spec §5: two groups of four characters joined by a
 * hyphen). Shown once, stored as Argon2id hashes, each usable once: the caller replaces the
 * matched hash with null. The alphabet leaves out characters read alike (0/O, 1/I/L), which
 * leaves 31 symbols: 8 × log2(31) ≈ 39.6 bits per code — the most this format allows.
 */
import type * as Argon2 from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';
import { argon2 } from './passwords.js';

export const BACKUP_CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const GROUP_LENGTH = 4;
/** Largest multiple of the alphabet size that fits in a byte: bytes at or above it are redrawn. */
const UNBIASED_LIMIT = 256 - (256 % BACKUP_CODE_ALPHABET.length);

export async function generateBackupCodes(count = 10): Promise<{ codes: string[]; hashes: string[] }> {
  const codes = new Set<string>();
  // A set, so that the (negligible) chance of a duplicate cannot yield fewer distinct codes.
  while (codes.size < count) codes.add(randomCode());
  const list = [...codes];
  // Argon2 is loaded on first use (see passwords.ts).
  const { hash } = await argon2.load();
  return { codes: list, hashes: await Promise.all(list.map((code) => hash(code))) };
}

/**
 * The canonical `XXXX-XXXX` form of what a person typed (any case, surrounding spaces, hyphen
 * optional), or null when it cannot be a code.
 */
export function normalizeBackupCode(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  // ASCII-only check before upper-casing: `toUpperCase` maps a few non-ASCII letters to ASCII.
  const parts = /^([A-Za-z0-9]{4})-?([A-Za-z0-9]{4})$/.exec(input.trim());
  if (!parts) return null;
  const code = `${parts[1]}-${parts[2]}`.toUpperCase();
  for (const char of code.replace('-', '')) if (!BACKUP_CODE_ALPHABET.includes(char)) return null;
  return code;
}

/**
 * The index of the unused (non-null) hash that `input` matches, or null. Every unused hash is
 * verified, match or not, so the time taken does not reveal which position matched.
 */
export async function matchBackupCode(input: unknown, hashes: readonly (string | null)[]): Promise<number | null> {
  const code = normalizeBackupCode(input);
  if (code === null) return null;
  // Outside verifySafely's try: a failed import is an error, not a wrong code.
  const { verify } = await argon2.load();
  let matched: number | null = null;
  for (const [index, stored] of hashes.entries()) {
    if (stored === null) continue;
    if (await verifySafely(verify, stored, code) && matched === null) matched = index;
  }
  return matched;
}

function randomCode(): string {
  const chars: string[] = [];
  const length = 2 * GROUP_LENGTH;
  while (chars.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < UNBIASED_LIMIT && chars.length < length) chars.push(BACKUP_CODE_ALPHABET[byte % BACKUP_CODE_ALPHABET.length]!);
    }
  }
  return `${chars.slice(0, GROUP_LENGTH).join('')}-${chars.slice(GROUP_LENGTH).join('')}`;
}

/** A malformed stored hash counts as no match rather than failing the sign-in. */
async function verifySafely(verify: typeof Argon2.verify, stored: string, code: string): Promise<boolean> {
  try {
    return await verify(stored, code);
  } catch {
    return false;
  }
}
