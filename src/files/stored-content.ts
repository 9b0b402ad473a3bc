/**
 * Stores uploaded content for the current unit of work: decode, hash, write once under the
 * database's content address. The key's shared lock is held until the transaction ends
 * (file-removal.ts explains why), and freshly written bytes are handed to the sweep, which removes
 * them if the transaction does not commit a row using them.
 */
import { currentEnv } from '../orm/env.js';
import { decodeBase64 } from './base64-content.js';
import { sha256, storageKey } from './content-address.js';
import { filesConfig } from './filestore-config.js';
import { lockKeyShared, noteFreshKey, sweepSoon } from './file-removal.js';

export interface StoredContent {
  checksum: string;
  filepath: string;
  file_size: number;
  /** Declared by a `data:` URL, if any. */
  mimetype?: string;
}

export async function storeContent(content: unknown): Promise<StoredContent> {
  const { store, uploadLimit } = filesConfig();
  const { bytes, mimetype } = decodeBase64(content, uploadLimit);
  const env = currentEnv();
  const checksum = sha256(bytes);
  const filepath = storageKey(env.db.name, checksum);
  await lockKeyShared(env.trx, filepath);
  if (await store.put(filepath, bytes)) {
    noteFreshKey(env.db.name, filepath);
    sweepSoon(env.db);
  }
  return { checksum, filepath, file_size: bytes.length, mimetype };
}
