/**
 * Stores uploaded content for the current unit of work: decode, hash, write once under the
 * database's content address. The key's shared lock is held until the transaction ends
 * (file-removal.ts explains why), and freshly written bytes are handed to the sweep, which removes
 * them if the transaction does not commit a row using them. One content is the one-element case
 * of `storeContents` (stored-contents.ts), which does the work.
 */
import { storeContents } from './stored-contents.js';

export interface StoredContent {
  checksum: string;
  filepath: string;
  file_size: number;
  /** Declared by a `data:` URL, if any. */
  mimetype?: string;
}

export async function storeContent(content: unknown): Promise<StoredContent> {
  const [stored] = await storeContents([content]);
  return stored!;
}
