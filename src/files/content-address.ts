/**
 * Content addressing (spec §2.4.1): a file is named by the SHA-256 of its bytes under its
 * database's prefix, `<db>/<cs[0:2]>/<cs[2:4]>/<checksum>`, so identical bytes of one database
 * are stored once and the key says which database stored them (file-removal.ts relies on that).
 */
import { createHash } from 'node:crypto';

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function storageKey(dbName: string, checksum: string): string {
  return `${dbName}/${checksum.slice(0, 2)}/${checksum.slice(2, 4)}/${checksum}`;
}

/** The database whose name prefixes `key` (the only one that may remove its bytes). */
export function keyOwner(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

const KEY = /^[a-z][a-z0-9_]{0,62}\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}$/;

/** Rejects anything but a well-formed key (a row's filepath is data: never trust it as a path). */
export function isStorageKey(key: string): boolean {
  return KEY.test(key);
}
