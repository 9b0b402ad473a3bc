/**
 * The file storage of one platform: the store `FF_FILESTORE` names, the upload limit, and a way
 * to open the platform's other databases (a database's sweep asks its clones before removing
 * shared bytes, `file-removal.ts`). Owned by the `Platform` instance and handed to every unit of
 * work it runs as its file-store port (`Env.ports.files`, `orm/ports.ts`), so two platforms in
 * one process — two servers, a test's scratch store — never share one by accident.
 */
import type { TenantDatabase } from '../db/engine.js';
import { currentEnv, type Env } from '../orm/env.js';
import type { FileStorePort } from '../orm/ports.js';
import type { FileStore } from './filestore.js';
import { releaseDeletedAttachments } from './release-keys.js';

export interface FileServiceOptions {
  store: FileStore;
  /** Largest upload in bytes (`FF_UPLOAD_LIMIT`). */
  uploadLimit: number;
  /** Opens another database of the platform, or null when it does not exist. */
  openDatabase?: ((name: string) => Promise<TenantDatabase | null>) | null;
}

export class FileService implements FileStorePort {
  store: FileStore;
  uploadLimit: number;
  openDatabase: ((name: string) => Promise<TenantDatabase | null>) | null;

  constructor(options: FileServiceOptions) {
    this.store = options.store;
    this.uploadLimit = options.uploadLimit;
    this.openDatabase = options.openDatabase ?? null;
  }

  /** Replaces some of the settings (a test points its platform at a scratch store or limit). */
  configure(changes: Partial<FileServiceOptions>): this {
    if (changes.store) this.store = changes.store;
    if (changes.uploadLimit !== undefined) this.uploadLimit = changes.uploadLimit;
    if (changes.openDatabase !== undefined) this.openDatabase = changes.openDatabase;
    return this;
  }

  releaseAttachments(ids: readonly number[]): Promise<void> {
    return releaseDeletedAttachments(ids, this);
  }
}

/** The file service of the unit of work running now (model code's uploads, the data loader's files). */
export function currentFiles(env: Env = currentEnv()): FileService {
  const files = env.ports.files;
  if (!(files instanceof FileService)) throw new Error('This unit of work has no file storage: run it through a Platform (platform.run, a request)');
  return files;
}
