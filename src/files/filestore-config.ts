/**
 * `FF_FILESTORE` read into a file store (local disk or an S3-compatible bucket), and the file
 * service a platform owns built from the settings (`file-service.ts`).
 */
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { Settings } from '../config/settings.js';
import type { FileStore } from './filestore.js';
import { FileService } from './file-service.js';
import { LocalFileStore } from './local-filestore.js';
import { S3FileStore } from './s3-filestore.js';

/** An S3 bucket name: 3–63 lowercase letters, digits, dots and hyphens, starting and ending alphanumeric. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `file:<dir>` → local disk; `s3://<bucket>[/<prefix>]` → bucket (S3_* and AWS_* variables). A value
 * of neither form, an empty directory, a malformed bucket name or an empty prefix segment (`a//b`)
 * is refused with the expected form: read once at start-up, it must not silently put files elsewhere.
 */
export function filestoreFromUrl(url: string, env: NodeJS.ProcessEnv = process.env): FileStore {
  const refuse = (why: string): never => {
    throw new Error(`FF_FILESTORE must be file:<dir> or s3://<bucket>[/<prefix>], got '${url}': ${why}`);
  };
  if (url.startsWith('file:')) {
    const dir = url.slice('file:'.length);
    if (!dir.trim()) refuse('the directory is empty');
    return new LocalFileStore(dir);
  }
  const m = /^s3:\/\/([^/]*)(?:\/(.*?))?\/?$/.exec(url);
  if (!m) return refuse('unknown scheme');
  const bucket = m[1]!;
  const prefix = m[2] ?? '';
  if (!BUCKET.test(bucket)) refuse(`'${bucket}' is not a bucket name (3-63 lowercase letters, digits, dots, hyphens)`);
  if (prefix && prefix.split('/').some((segment) => !segment)) refuse('the prefix has an empty segment');
  const config: S3ClientConfig = {
    region: env.S3_REGION || env.AWS_REGION || 'us-east-1',
    endpoint: env.S3_ENDPOINT || undefined,
    forcePathStyle: env.S3_FORCE_PATH_STYLE === '1' || env.S3_FORCE_PATH_STYLE === 'true',
  };
  return new S3FileStore(bucket, prefix, config);
}

/** The file service of a platform started with `settings` (`FF_FILESTORE`, `FF_UPLOAD_LIMIT`). */
export function fileServiceFromSettings(settings: Pick<Settings, 'filestore' | 'uploadLimit'>): FileService {
  return new FileService({ store: filestoreFromUrl(settings.filestore), uploadLimit: settings.uploadLimit });
}
