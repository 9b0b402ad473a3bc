/**
 * A genuinely full disk under the local file store (spec §2.4: "malformed base64, a failing bucket
 * or a full disk answer a clear error with no row created and no stray bytes left behind"). The
 * store's root lives on a 256 KiB tmpfs mounted here, filled close to full (and then to the last
 * byte); uploads that do not fit — as an Attachment and through a File field — must answer 507
 * `InsufficientStorage` saying nothing was saved, create no row, leave no temporary or partial file
 * and no lost space, keep the files already stored intact, and let a small upload through afterwards.
 *
 * Mounting needs root and a kernel that allows it; elsewhere the suite is skipped with the reason.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentEnv } from '../../src/orm/env.js';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import { InsufficientStorage } from '../../src/errors.js';
import { storageKey } from '../../src/files/content-address.js';
import { storeContents } from '../../src/files/stored-contents.js';
import { sweep } from '../../src/files/file-removal.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const TMPFS_SIZE = '256k';

/** Why a tmpfs cannot be mounted here (the suite is then skipped), or null when it can. */
function tmpfsUnavailable(): string | null {
  if (process.platform !== 'linux') return `mounting a tmpfs needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const probe = mkdtempSync(join(tmpdir(), 'ff-tmpfs-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return null;
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return `mount -t tmpfs failed: ${stderr || (err as Error).message}`;
  } finally {
    rmdirSync(probe);
  }
}

const UNAVAILABLE = tmpfsUnavailable();
if (UNAVAILABLE) console.warn(`full-disk tests skipped: ${UNAVAILABLE}`);

const PROBE = `
import { Model, fields } from 'fieldforge';
export class DiskProbe extends Model {
  static override fields = { name: fields.Char({ required: true }), doc: fields.File() };
}
`;

const b64 = (b: Buffer) => b.toString('base64');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let tmp: string;
let mnt: string;
let mounted = false;
let t: TestDatabase;
let store: LocalFileStore;
const existing = { attachment: 0, probe: 0, probeDoc: 0, bytes: Buffer.alloc(0), docBytes: Buffer.alloc(0) };

/** Bytes still free on the tmpfs. */
const free = async () => {
  const s = await statfs(mnt);
  return s.bavail * s.bsize;
};

/** Every regular file on the tmpfs with its size, by path relative to the mount. */
async function snapshot(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else out[relative(mnt, full)] = (await stat(full)).size;
    }
  };
  await walk(mnt);
  return out;
}

/** Fills the tmpfs until only about `leave` bytes are free (0: until a write hits ENOSPC). */
async function fill(name: string, leave: number): Promise<void> {
  const size = Math.max(0, (await free()) - leave);
  if (leave > 0) {
    await writeFile(join(mnt, name), randomBytes(size));
    return;
  }
  // To the last byte: write more than is free and keep whatever the short write managed.
  await writeFile(join(mnt, name), randomBytes(size + 64 * 1024)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOSPC') throw err;
  });
}

const Attachment = () => currentEnv().registry.meta('Attachment').cls as any;
const DiskProbe = () => currentEnv().registry.meta('DiskProbe').cls as any;
const counts = async () => ({
  attachments: await t.run(() => Attachment().query().count()),
  probes: await t.run(() => DiskProbe().query().count()),
});

/** The `{detail, error}` a full disk must answer, naming nothing of the server's internals. */
function expectDiskFull(res: { statusCode: number; body: string; json(): any }): void {
  expect(res.statusCode, res.body).toBe(507);
  const { detail, error } = res.json();
  expect(error).toBe('InsufficientStorage');
  expect(detail).toBe('The file store is full: the file was not saved');
  for (const internal of [mnt, tmp, 'ENOSPC', '.tmp', t.name]) expect(detail).not.toContain(internal);
}

async function served(id: number): Promise<Buffer> {
  const res = await t.api('GET', `/filestore/view/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.rawPayload;
}

describe.skipIf(UNAVAILABLE !== null)(`uploads to a full local disk${UNAVAILABLE ? ` (skipped: ${UNAVAILABLE})` : ''}`, () => {
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'ff-full-disk-'));
    mnt = join(tmp, 'mnt');
    await mkdir(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', mnt], { stdio: 'pipe' });
    mounted = true;
    store = new LocalFileStore(join(mnt, 'filestore'));

    const root = join(tmp, 'modules');
    await writeProbeModule(root, 'disk_probe', { 'models/index.ts': PROBE, 'security/access.yaml': adminAccessYaml(['DiskProbe']) });
    t = await testDatabase('core', [root]);
    await t.platform.install(t.name, { init: ['disk_probe'] });
    t.platform.files.configure({ store, uploadLimit: 1 << 20 });

    // Files already stored before the disk fills up.
    existing.bytes = randomBytes(20 * 1024);
    const att = await t.api('POST', '/api/create/Attachment', { name: 'existing.bin', base64: b64(existing.bytes) });
    expect(att.statusCode, att.body).toBe(200);
    existing.attachment = att.json().id;
    existing.docBytes = randomBytes(8 * 1024);
    const probe = await t.api('POST', '/api/create/DiskProbe', { name: 'kept', doc: { name: 'kept.bin', base64: b64(existing.docBytes) } });
    expect(probe.statusCode, probe.body).toBe(200);
    existing.probe = probe.json().id;
    existing.probeDoc = await t.run(async () => (await DiskProbe().get(existing.probe)).doc);
    expect(existing.probeDoc).toBeGreaterThan(0);

    // Close to full: a few pages left, far less than the uploads below.
    await fill('filler', 24 * 1024);
  });

  afterAll(async () => {
    await t?.close();
    if (mounted) {
      try {
        execFileSync('umount', [mnt], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', mnt], { stdio: 'pipe' });
      }
    }
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('an Attachment upload that does not fit answers 507 with no row, no stray bytes and no space lost', async () => {
    const before = { counts: await counts(), files: await snapshot(), free: await free() };
    expect(before.free).toBeGreaterThan(8 * 1024);
    const content = randomBytes(64 * 1024);
    expect(content.length).toBeGreaterThan(before.free);

    expectDiskFull(await t.api('POST', '/api/create/Attachment', { name: 'too-big.bin', base64: b64(content) }));

    expect(await counts()).toEqual(before.counts);
    expect(await t.run(() => Attachment().query().filter({ name: 'too-big.bin' }).count())).toBe(0);
    expect(await snapshot()).toEqual(before.files);
    expect(await store.stat(storageKey(t.name, sha(content)))).toBeNull();
    expect(await free()).toBe(before.free);
  });

  it('a File field upload that does not fit answers 507: no record, no attachment, the old file kept', async () => {
    const before = { counts: await counts(), files: await snapshot(), free: await free() };
    const content = randomBytes(64 * 1024);

    expectDiskFull(await t.api('POST', '/api/create/DiskProbe', { name: 'no room', doc: { name: 'big.bin', base64: b64(content) } }));
    expectDiskFull(await t.api('PUT', `/api/update/DiskProbe/${existing.probe}`, { doc: { name: 'big.bin', base64: b64(content) } }));

    expect(await counts()).toEqual(before.counts);
    expect(await t.run(() => DiskProbe().query().filter({ name: 'no room' }).count())).toBe(0);
    expect(await t.run(async () => (await DiskProbe().get(existing.probe)).doc)).toBe(existing.probeDoc);
    expect(await snapshot()).toEqual(before.files);
    expect(await free()).toBe(before.free);
  });

  it('the store itself: ENOSPC partway through a write removes the partial temporary file', async () => {
    const before = { files: await snapshot(), free: await free() };
    const bytes = randomBytes(before.free + 32 * 1024);
    const key = storageKey(t.name, sha(bytes));
    const err = await store.put(key, bytes).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientStorage);
    expect(await store.stat(key)).toBeNull();
    expect(await snapshot()).toEqual(before.files);
    expect(await free()).toBe(before.free);
  });

  it('many files at once (data files): when one does not fit, the ones written go with the rollback', async () => {
    const before = { files: await snapshot(), free: await free() };
    const small = randomBytes(2 * 1024);
    const big = randomBytes(before.free + 32 * 1024);
    const err = await t.failure(() => storeContents([b64(small), b64(big)]));
    expect(err).toBeInstanceOf(InsufficientStorage);
    // The small file landed before the failure; the sweep removes it, as no committed row uses it.
    await sweep(await t.platform.database(t.name), t.platform.files);
    expect(await store.stat(storageKey(t.name, sha(small)))).toBeNull();
    expect(await snapshot()).toEqual(before.files);
    expect(await free()).toBe(before.free);
  });

  it('a disk full to the last byte refuses even a tiny upload; freeing space lets it through', async () => {
    await fill('last-bytes', 0);
    expect(await free()).toBe(0);
    const before = { counts: await counts(), files: await snapshot() };
    const tiny = randomBytes(100);

    expectDiskFull(await t.api('POST', '/api/create/Attachment', { name: 'tiny.bin', base64: b64(tiny) }));
    expect(await counts()).toEqual(before.counts);
    expect(await snapshot()).toEqual(before.files);
    expect(await free()).toBe(0);

    await rm(join(mnt, 'last-bytes'));
    const ok = await t.api('POST', '/api/create/Attachment', { name: 'tiny.bin', base64: b64(tiny) });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await served(ok.json().id)).toEqual(tiny);
  });

  it('after the failures a small upload works and the files stored before are intact', async () => {
    const small = randomBytes(2 * 1024);
    const res = await t.api('POST', '/api/create/Attachment', { name: 'small.bin', base64: b64(small) });
    expect(res.statusCode, res.body).toBe(200);
    expect(await served(res.json().id)).toEqual(small);
    const created = await t.api('POST', '/api/create/DiskProbe', { name: 'fits', doc: { name: 'fits.bin', base64: b64(small.subarray(0, 1024)) } });
    expect(created.statusCode, created.body).toBe(200);

    expect(await served(existing.attachment)).toEqual(existing.bytes);
    expect(await served(existing.probeDoc)).toEqual(existing.docBytes);
    const key = await t.run(async () => (await Attachment().get(existing.attachment)).filepath);
    expect(await readFile(join(store.root, ...key.split('/')))).toEqual(existing.bytes);
    const files = Object.keys(await snapshot());
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
