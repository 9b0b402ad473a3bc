/**
 * Files on local disk under one root (`FF_FILESTORE=file:<dir>`, default `$FF_DATA_DIR/filestore`).
 * A write goes to a temporary file, flushed to disk (`datasync`) and then renamed into place, so a
 * key never holds partial bytes — not after a failed write (full disk), which leaves nothing
 * behind, nor after a crash: a key is written once and never rewritten, so an unflushed file
 * renamed into place would stay empty for good.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import type { FileStore, StoredObject } from './filestore.js';
import { FileStorageError, InsufficientStorage } from '../errors.js';

export class LocalFileStore implements FileStore {
  readonly kind = 'local' as const;
  constructor(readonly root: string) {}

  private path(key: string): string {
    if (key.split('/').some((part) => part === '..' || part === '')) throw new Error(`Invalid storage key '${key}'`);
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, bytes: Buffer): Promise<boolean> {
    const target = this.path(key);
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      if (await this.stat(key)) return false;
      await mkdir(dirname(target), { recursive: true });
      const handle = await open(temp, 'wx');
      try {
        await handle.writeFile(bytes);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
      return true;
    } catch (err) {
      await rm(temp, { force: true }).catch(() => undefined);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') throw new InsufficientStorage('The file store is full: the file was not saved');
      throw new FileStorageError(`The file store failed (${code ?? 'error'}): the file was not saved`);
    }
  }

  async stat(key: string): Promise<StoredObject | null> {
    try {
      const s = await stat(this.path(key));
      return s.isFile() ? { size: s.size, modified: s.mtime } : null;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw err;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const stream = createReadStream(this.path(key), range ?? {});
    // Surface a missing file as an error here, not as a broken response later.
    await new Promise<void>((resolve, reject) => stream.once('open', () => resolve()).once('error', reject));
    return stream;
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async list(prefix: string): Promise<string[]> {
    const dir = this.path(prefix.replace(/\/$/, ''));
    const out: string[] = [];
    const walk = async (d: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(d, { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const e of entries) {
        const full = join(d, e.name);
        if (e.isDirectory()) await walk(full);
        else if (!e.name.endsWith('.tmp')) out.push(relative(this.root, full).split(sep).join('/'));
      }
    };
    await walk(dir);
    return out.sort();
  }

  async presignedUrl(): Promise<string | null> {
    return null;
  }
}
