/**
 * Files on an S3-compatible bucket (`FF_FILESTORE=s3://<bucket>[/<prefix>]`): the object key is
 * the optional prefix plus the same relative key as on disk. Serving redirects to a presigned GET
 * whose response overrides carry the content type, disposition and caching the server would send.
 */
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { FileStore, PresignOptions, StoredObject } from './filestore.js';
import { FileStorageError } from '../errors.js';

/** The SDK's modules and the client, loaded on the store's first operation. */
interface Sdk {
  s3: typeof import('@aws-sdk/client-s3');
  presigner: typeof import('@aws-sdk/s3-request-presigner');
  client: S3Client;
}

export class S3FileStore implements FileStore {
  readonly kind = 's3' as const;
  private loaded: Promise<Sdk> | undefined;
  constructor(
    readonly bucket: string,
    readonly prefix: string,
    private readonly config: S3ClientConfig,
  ) {}

  /**
   * The SDK, imported on first use: it adds about 30 MiB to a process, which a server storing
   * files on disk never needs.
   */
  private sdk(): Promise<Sdk> {
    this.loaded ??= (async () => {
      const [s3, presigner] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]);
      quietNodeVersionWarning();
      return { s3, presigner, client: new s3.S3Client(this.config) };
    })();
    return this.loaded;
  }

  /** The bucket's client (tests create their bucket with it). */
  async client(): Promise<S3Client> {
    return (await this.sdk()).client;
  }

  private objectKey(key: string): string {
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async put(key: string, bytes: Buffer): Promise<boolean> {
    try {
      if (await this.stat(key)) return false;
      const { s3, client } = await this.sdk();
      await client.send(new s3.PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: bytes, ContentLength: bytes.length }));
      return true;
    } catch (err) {
      throw storageError(err);
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const { s3, client } = await this.sdk();
      const head = await client.send(new s3.HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { size: head.ContentLength ?? 0, modified: head.LastModified ?? new Date(0) };
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404 || (err as Error).name === 'NotFound' || (err as Error).name === 'NoSuchKey') return null;
      throw storageError(err);
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    try {
      const { s3, client } = await this.sdk();
      const out = await client.send(new s3.GetObjectCommand({
        Bucket: this.bucket, Key: this.objectKey(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined,
      }));
      return out.Body as Readable;
    } catch (err) {
      throw storageError(err);
    }
  }

  async remove(key: string): Promise<void> {
    try {
      const { s3, client } = await this.sdk();
      await client.send(new s3.DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    } catch (err) {
      throw storageError(err);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    const strip = this.prefix ? this.prefix.length + 1 : 0;
    try {
      const { s3, client } = await this.sdk();
      do {
        const page = await client.send(new s3.ListObjectsV2Command({
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
    const { s3, presigner, client } = await this.sdk();
    return presigner.getSignedUrl(client, new s3.GetObjectCommand({
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
