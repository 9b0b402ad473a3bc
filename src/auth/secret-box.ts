/**
 * Encryption at rest for secrets that must be read back (a TOTP shared secret cannot be hashed):
 * AES-256-GCM under a key derived from the platform secret, so a database dump alone does not
 * yield second factors. Format: `v1.<iv>.<tag>.<ciphertext>`, base64url parts.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { purposeKey } from '../config/secret.js';

export function sealSecret(plain: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', purposeKey(secret, 'secret-box'), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

/** The plain text, or null when the box was sealed under another secret or tampered with. */
export function openSecret(sealed: string, secret: string): string | null {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', purposeKey(secret, 'secret-box'), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
