/**
 * The storage contract shared by the local-disk and S3 adapters. Keys are relative
 * (`<db>/<2 hex>/<2 hex>/<sha256>`, content-address.ts) and identical on both, so a filestore can
 * be moved between disk and bucket by copying objects. Bytes are written whole (uploads arrive
 * decoded and bounded by the upload limit) and read as streams (serving never buffers a file).
 */
import type { Readable } from 'node:stream';

export interface StoredObject {
  size: number;
  /** When the bytes were first stored (content addressing never rewrites them). */
  modified: Date;
}

/** How a presigned bucket URL should answer: the same choices the server applies itself. */
export interface PresignOptions {
  contentType: string;
  contentDisposition: string;
  cacheControl: string;
  /** Lifetime of the URL in seconds. */
  expiresIn: number;
}

export interface FileStore {
  readonly kind: 'local' | 's3';
  /** Stores `bytes` under `key` unless the key already holds them; true when it wrote. */
  put(key: string, bytes: Buffer): Promise<boolean>;
  /** Size and age of the object, or null when absent. */
  stat(key: string): Promise<StoredObject | null>;
  /** The bytes of `key` (an inclusive byte range when given) as a stream. */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /** Removes `key`; absent keys are not an error. */
  remove(key: string): Promise<void>;
  /** Keys directly or indirectly under `prefix` (which ends with `/`). */
  list(prefix: string): Promise<string[]>;
  /** A short-lived URL the client fetches the bytes from, or null when the store serves none. */
  presignedUrl(key: string, options: PresignOptions): Promise<string | null>;
}
