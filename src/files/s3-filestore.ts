/**
 * Files on an S3-compatible bucket (`FF_FILESTORE=s3://<bucket>[/<prefix>]`): the object key is
 * the optional prefix plus the same relative key as on disk. Serving redirects to a presigned GET
 * whose response overrides carry the content type, disposition and caching the server would send.
 */
import {
  DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';
import type { FileStore, PresignOptions, StoredObject } from './filestore.js';
import { FileStorageError } from './filestore-errors.js';

export class S3FileStore implements FileStore {
  readonly kind = 's3' as const;
  readonly client: S3Client;
  constructor(
    readonly bucket: string,
    readonly prefix: string,
    config: S3ClientConfig,
  ) {
    quietNodeVersionWarning();
    this.client = new S3Client(config);
  }

  private objectKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async put(key: string, bytes: Buffer): Promise<boolean> {
    try {
      if (await this.stat(key)) return false;
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: bytes, ContentLength: bytes.length }));
      return true;
    } catch (err) {
      throw storageError(err);
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { size: head.ContentLength ?? 0, modified: head.LastModified ?? new Date(0) };
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404 || (err as Error).name === 'NotFound' || (err as Error).name === 'NoSuchKey') return null;
      throw storageError(err);
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    try {
      const out = await this.client.send(new GetObjectCommand({
        Bucket: this.bucket, Key: this.objectKey(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined,
      }));
      return out.Body as Readable;
    } catch (err) {
      throw storageError(err);
    }
  }

  async remove(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    } catch (err) {
      throw storageError(err);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    const strip = this.prefix ? this.prefix.length + 1 : 0;
    try {
      do {
        const page = await this.client.send(new ListObjectsV2Command({
          Bucket: this.bucket, Prefix: this.objectKey(prefix), ContinuationToken: token,
        }));
        for (const o of page.Contents ?? []) if (o.Key) out.push(o.Key.slice(strip));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw storageError(err);
    }
    return out.sort();
  }

  async presignedUrl(key: string, o: PresignOptions): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({
      Bucket: this.bucket, Key: this.objectKey(key),
      ResponseContentType: o.contentType, ResponseContentDisposition: o.contentDisposition, ResponseCacheControl: o.cacheControl,
    }), { expiresIn: o.expiresIn });
  }
}

/**
 * The SDK warns once per process, when its first client is built, that releases after January 2027
 * will need Node 22 (aws/aws-sdk-js-v3#7983). FieldForge runs on Node 20 with these pinned SDK
 * versions on purpose (DEPENDENCIES.md), so the warning tells an operator nothing to act on. This
 * sets the SDK's documented switch, `AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true`, before
 * the client reads it; an operator's own value, `false` included, is left as it is.
 */
function quietNodeVersionWarning(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

function storageError(err: unknown): FileStorageError {
  if (err instanceof FileStorageError) return err;
  const name = (err as Error)?.name ?? 'error';
  return new FileStorageError(`The file store failed (${name}): the operation was not completed`);
}
