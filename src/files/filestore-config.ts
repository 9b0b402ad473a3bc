/**
 * The process's file storage: the store `FF_FILESTORE` names, the upload limit and, when the
 * platform is up, a way to open other databases (the sweep checks clones, file-removal.ts). Model
 * code runs without a platform handle (`Attachment.create_from_file`), so this is process-wide,
 * configured once at start-up (HTTP app, CLI) and read lazily from the environment otherwise.
 */
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { readSettings } from '../config/settings.js';
import type { TenantDatabase } from '../db/engine.js';
import type { FileStore } from './filestore.js';
import { LocalFileStore } from './local-filestore.js';
import { S3FileStore } from './s3-filestore.js';

export interface FilesConfig {
  store: FileStore;
  /** Largest upload in bytes (`FF_UPLOAD_LIMIT`). */
  uploadLimit: number;
  /** Opens another FieldForge database, or null when it does not exist. */
  openDatabase?: (name: string) => Promise<TenantDatabase | null>;
}

let current: FilesConfig | null = null;

/** `file:<dir>` → local disk; `s3://<bucket>[/<prefix>]` → bucket (S3_* and AWS_* variables). */
export function filestoreFromUrl(url: string, env: NodeJS.ProcessEnv = process.env): FileStore {
  if (url.startsWith('file:')) return new LocalFileStore(url.slice('file:'.length));
  const m = /^s3:\/\/([^/]+)(?:\/(.*?))?\/?$/.exec(url);
  if (!m) throw new Error(`FF_FILESTORE must be file:<dir> or s3://<bucket>[/<prefix>], got '${url}'`);
  const config: S3ClientConfig = {
    region: env.S3_REGION || env.AWS_REGION || 'us-east-1',
    endpoint: env.S3_ENDPOINT || undefined,
    forcePathStyle: env.S3_FORCE_PATH_STYLE === '1' || env.S3_FORCE_PATH_STYLE === 'true',
  };
  return new S3FileStore(m[1]!, m[2] ?? '', config);
}

export function configureFiles(config: Partial<FilesConfig>): FilesConfig {
  current = { ...filesConfig(), ...config };
  return current;
}

export function filesConfig(): FilesConfig {
  if (!current) {
    const settings = readSettings();
    current = { store: filestoreFromUrl(settings.filestore), uploadLimit: settings.uploadLimit };
  }
  return current;
}
