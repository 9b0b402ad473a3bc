/**
 * Attachments and their bytes (spec §2.4) on both stores: local disk and an S3-protocol server
 * (s3rver, started here on a free port). Content addressing, dedup, base64 handling, deferred
 * removal and the sweep (rolled-back deletes, a concurrent upload of the same bytes), clones,
 * create_from_file / remove_from_attachment, File fields, and failures that must leave nothing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentEnv, withEnv } from '../../src/orm/env.js';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import { S3FileStore } from '../../src/files/s3-filestore.js';
import type { FileStore } from '../../src/files/filestore.js';
import { recordClone, sweep } from '../../src/files/file-removal.js';
import { decodeBase64 } from '../../src/orm/base64-content.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { s3Options, startTestBucket, type TestBucket } from '../support/s3-bucket.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import type { Rec } from '../support/orm.js';

const PROBE = `
import { Model, fields } from 'fieldforge';
export class FileProbe extends Model {
  static override fields = { name: fields.Char({ required: true }), doc: fields.File(), raw: fields.Binary() };
}
`;

let tmp: string;
let bucket: TestBucket;
let t: TestDatabase;
const stores: Record<string, FileStore> = {};

const b64 = (s: string) => Buffer.from(s).toString('base64');
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ff-files-'));
  bucket = await startTestBucket(tmp, 'ff-test', 'tenant-files');
  stores.local = new LocalFileStore(join(tmp, 'disk'));
  stores.s3 = bucket.store;

  const root = join(tmp, 'modules');
  await writeProbeModule(root, 'file_probe', { 'models/index.ts': PROBE, 'security/access.yaml': adminAccessYaml(['FileProbe']) });
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['file_probe'] });
});
afterAll(async () => {
  await t?.close();
  await bucket?.close();
  await rm(tmp, { recursive: true, force: true });
});

const Attachment = () => currentEnv().registry.meta('Attachment').cls as any;
const exists = async (key: string) => (await t.platform.files.store.stat(key)) !== null;
const runSweep = async () => sweep(await t.platform.database(t.name), t.platform.files);

describe.each(['local', 's3'])('attachments on %s storage', (kind) => {
  beforeAll(() => {
    t.platform.files.configure({ store: stores[kind]!, uploadLimit: 1024 });
  });

  it('content-addresses the bytes under <db>/<2 hex>/<2 hex>/<sha256>, keeps base64 out of the row, computes url', async () => {
    const content = `hello ${kind}`;
    const id = await t.run(() => Attachment().create_from_file(b64(content), 'hello.txt'));
    const [row] = await t.run(async () => (await sql<any>`SELECT * FROM attachment WHERE id = ${id}`.execute(currentEnv().work.trx)).rows);
    const cs = sha(content);
    expect(row.checksum).toBe(cs);
    expect(row.filepath).toBe(`${t.name}/${cs.slice(0, 2)}/${cs.slice(2, 4)}/${cs}`);
    expect(row.file_size).toBe(content.length);
    expect(row.mimetype).toBe('text/plain');
    expect('base64' in row).toBe(false);
    const read = await t.api('POST', `/api/fetch/Attachment/${id}`, { fields: ['url', 'base64', 'checksum'] });
    expect(read.json()).toMatchObject({ url: `/filestore/view/${id}`, base64: null, checksum: cs });
    const stream = await t.platform.files.store.read(row.filepath);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(content);
    if (kind === 's3') expect((await stores.s3!.list('')).some((k) => k === row.filepath)).toBe(true);
  });

  it('stores identical bytes once and removes them only with the last row, after the sweep', async () => {
    const content = `shared ${kind}`;
    const [a, b] = await t.run(async () => [
      await Attachment().create_from_file(b64(content), 'a.txt'), await Attachment().create_from_file(b64(content), 'b.txt'),
    ]);
    const key = `${t.name}/${sha(content).slice(0, 2)}/${sha(content).slice(2, 4)}/${sha(content)}`;
    await t.run(async () => (await Attachment().get(a)).unlink());
    await runSweep();
    expect(await exists(key)).toBe(true);
    await t.run(async () => {
      await (await Attachment().get(b)).unlink();
      // Inside the deleting transaction the bytes are still there (removal waits for the commit).
      expect(await exists(key)).toBe(true);
    });
    await runSweep();
    expect(await exists(key)).toBe(false);
  });

  it('a rolled-back delete never touches the bytes', async () => {
    const content = `rollback ${kind}`;
    const id = await t.run(() => Attachment().create_from_file(b64(content), 'r.txt'));
    const err = await t.failure(async () => {
      await (await Attachment().get(id)).unlink();
      throw new Error('roll back');
    });
    expect(err.message).toBe('roll back');
    const swept = await runSweep();
    expect(swept.removed).toEqual([]);
    const path = await t.run(async () => (await Attachment().get(id)).filepath);
    expect(await exists(path)).toBe(true);
  });

  it('the sweep re-checks references: a concurrent upload of the same bytes keeps them', async () => {
    const content = `race ${kind}`;
    const id = await t.run(() => Attachment().create_from_file(b64(content), 'one.txt'));
    const key = await t.run(async () => (await Attachment().get(id)).filepath);
    await t.run(async () => (await Attachment().get(id)).unlink());
    // A second upload of the same bytes is in flight (its transaction open) while the sweep runs.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let uploaded!: () => void;
    const started = new Promise<void>((r) => (uploaded = r));
    const upload = t.run(async () => {
      await Attachment().create_from_file(b64(content), 'two.txt');
      uploaded();
      await gate;
    });
    await started;
    const during = await runSweep();
    expect(during.removed).not.toContain(key);
    expect(await exists(key)).toBe(true);
    release();
    await upload;
    await runSweep();
    expect(await exists(key)).toBe(true);
  });

  it('refuses malformed base64 and oversized uploads with no row and no bytes', async () => {
    const before = await t.run(() => Attachment().query().count());
    const bad = await t.api('POST', '/api/create/Attachment', { name: 'bad.bin', base64: 'not*base64!' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/not valid base64/);
    const big = await t.api('POST', '/api/create/Attachment', { name: 'big.bin', base64: b64('x'.repeat(2000)) });
    expect(big.statusCode).toBe(413);
    expect(big.json().detail).toMatch(/upload limit of 1024 bytes/);
    expect(await t.run(() => Attachment().query().count())).toBe(before);
    expect(await exists(`${t.name}/${sha('x'.repeat(2000)).slice(0, 2)}/${sha('x'.repeat(2000)).slice(2, 4)}/${sha('x'.repeat(2000))}`)).toBe(false);
  });

  it('removes bytes a failed transaction wrote (no row, no stray file after the sweep)', async () => {
    const content = `stray ${kind}`;
    const key = `${t.name}/${sha(content).slice(0, 2)}/${sha(content).slice(2, 4)}/${sha(content)}`;
    await t.failure(async () => {
      await Attachment().create_from_file(b64(content), 'stray.txt');
      expect(await exists(key)).toBe(true);
      throw new Error('later step failed');
    });
    await runSweep();
    expect(await exists(key)).toBe(false);
  });

  it('create_from_file replaces the attachment of a field; remove_from_attachment needs all three arguments', async () => {
    const probe = await t.run(async () => (await currentEnv().registry.meta('FileProbe').cls.create({ name: 'p' })).id);
    const first = await t.run(() => Attachment().create_from_file(b64(`v1 ${kind}`), 'v1.txt', 'FileProbe', probe, 'doc'));
    const second = await t.run(() => Attachment().create_from_file(b64(`v2 ${kind}`), 'v2.txt', 'FileProbe', probe, 'doc'));
    const left = await t.run(() => Attachment().query().filter({ model: 'FileProbe', record: probe, field: 'doc' }).ids());
    expect(left).toEqual([second]);
    expect(first).not.toBe(second);
    for (const args of [[], ['FileProbe', probe], ['FileProbe', null, 'doc'], [null, probe, 'doc']]) {
      const err = await t.failure(() => Attachment().remove_from_attachment(...args));
      expect(err.name).toBe('UserError');
    }
    const key = await t.run(async () => (await Attachment().get(second)).filepath);
    await t.run(() => Attachment().remove_from_attachment('FileProbe', probe, 'doc'));
    await runSweep();
    expect(await exists(key)).toBe(false);
    expect(await t.run(() => Attachment().query().filter({ id: second }).count())).toBe(0);
  });

  it('File fields hold an attachment id: an upload becomes an owned Attachment, clearing deletes it; Binary is inline', async () => {
    const created = await t.api('POST', '/api/create/FileProbe', {
      name: 'with file', doc: { name: 'doc.pdf', base64: b64(`pdf ${kind}`) }, raw: b64('inline bytes'),
    });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().id;
    const att = await t.run(async () => Attachment().query().filter({ model: 'FileProbe', record: id, field: 'doc' }).first());
    expect(att).not.toBeNull();
    expect(att.name).toBe('doc.pdf');
    expect(att.mimetype).toBe('application/pdf');
    const row = await t.run(async () => (await sql<any>`SELECT doc_id, raw FROM file_probe WHERE id = ${id}`.execute(currentEnv().work.trx)).rows[0]);
    expect(row.doc_id).toBe(att.id);
    expect(Buffer.from(row.raw).toString()).toBe('inline bytes');
    // Replacing the file deletes the old attachment; clearing deletes the new one.
    expect((await t.api('PUT', `/api/update/FileProbe/${id}`, { doc: { name: 'v2.pdf', base64: b64(`pdf2 ${kind}`) } })).statusCode).toBe(200);
    const owned = () => t.run(async () => Attachment().query().filter({ model: 'FileProbe', record: id }).all());
    const afterReplace = await owned();
    expect(afterReplace.map((a: Rec) => a.name)).toEqual(['v2.pdf']);
    expect((await t.api('PUT', `/api/update/FileProbe/${id}`, { doc: null })).statusCode).toBe(200);
    expect(await owned()).toEqual([]);
    await runSweep();
    expect(await exists(afterReplace[0].filepath)).toBe(false);
    // Deleting the record deletes its attachments.
    const again = (await t.api('POST', '/api/create/FileProbe', { name: 'gone', doc: { name: 'g.txt', base64: b64(`g ${kind}`) } })).json().id;
    expect((await t.api('DELETE', `/api/delete/FileProbe/${again}`)).statusCode).toBe(200);
    expect(await t.run(() => Attachment().query().filter({ model: 'FileProbe', record: again }).count())).toBe(0);
  });

  it('a clone shares the files; deleting in the clone, then in the source, never breaks the other', async () => {
    const content = `cloned ${kind}`;
    const id = await t.run(() => Attachment().create_from_file(b64(content), 'c.txt'));
    const key = await t.run(async () => (await Attachment().get(id)).filepath);
    const cloneName = `${t.name}_c${kind}`;
    const source = await t.platform.database(t.name);
    // What `db clone` must do: mark the clone in the store, then copy the database.
    await recordClone(source, cloneName, t.platform.files);
    await t.engine.closeDatabase(t.name);
    await t.engine.clone(t.name, cloneName);
    try {
      const cloneRun = <T>(fn: () => Promise<T>) => t.platform.run(cloneName, {}, fn);
      const clone = await t.platform.database(cloneName);
      const second = await cloneRun(() => Attachment().create_from_file(b64(content), 'again.txt'));
      expect(await cloneRun(async () => (await Attachment().get(id)).filepath)).toBe(key);
      // Deleting the inherited attachment in the clone removes only the clone's row.
      await cloneRun(async () => (await Attachment().get(id)).unlink());
      await sweep(clone, t.platform.files);
      expect(await exists(key)).toBe(true);
      expect(await t.run(() => Attachment().query().filter({ id }).count())).toBe(1);
      // The clone stores its own uploads under its own prefix.
      expect(await cloneRun(async () => (await Attachment().get(second)).filepath)).toBe(key.replace(`${t.name}/`, `${cloneName}/`));

      // Another inherited file, deleted in the source first: the clone still serves it.
      const other = `kept by clone ${kind}`;
      await t.engine.closeDatabase(cloneName);
      await t.engine.drop(cloneName);
      t.platform.forget(cloneName);
      const otherId = await t.run(() => Attachment().create_from_file(b64(other), 'o.txt'));
      const otherKey = await t.run(async () => (await Attachment().get(otherId)).filepath);
      await recordClone(await t.platform.database(t.name), cloneName, t.platform.files);
      await t.engine.closeDatabase(t.name);
      await t.engine.clone(t.name, cloneName);
      await t.run(async () => (await Attachment().get(otherId)).unlink());
      const kept = await runSweep();
      expect(kept.kept).toContain(otherKey);
      expect(await exists(otherKey)).toBe(true);
      // Once the clone lets go too, the source's next sweep removes the bytes.
      await cloneRun(async () => (await Attachment().get(otherId)).unlink());
      // The clone never removes its source's bytes; the source's next sweep does.
      expect((await sweep(await t.platform.database(cloneName), t.platform.files)).removed).toEqual([]);
      await runSweep();
      expect(await exists(otherKey)).toBe(false);
    } finally {
      await t.engine.closeDatabase(cloneName).catch(() => {});
      await t.engine.drop(cloneName).catch(() => {});
      t.platform.forget(cloneName);
    }
  });
});

describe('storage failures', () => {
  it('a failing bucket answers a clear error and creates no row', async () => {
    t.platform.files.configure({
      store: new S3FileStore('no-such-bucket', '', { ...s3Options(bucket.endpoint), maxAttempts: 1 }),
      uploadLimit: 1024,
    });
    const before = await t.run(() => Attachment().query().count());
    const res = await t.api('POST', '/api/create/Attachment', { name: 'x.txt', base64: b64('bucket down') });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'FileStorageError' });
    expect(res.json().detail).toMatch(/file store failed/);
    expect(await t.run(() => Attachment().query().count())).toBe(before);
  });

  it('a failing disk answers a clear error, creates no row and leaves no temporary file', async () => {
    const blocker = join(tmp, 'not-a-dir');
    await writeFile(blocker, 'a file where the store root should be');
    t.platform.files.configure({ store: new LocalFileStore(blocker), uploadLimit: 1024 });
    const res = await t.api('POST', '/api/create/Attachment', { name: 'x.txt', base64: b64('disk down') });
    expect(res.statusCode).toBe(503);
    expect(res.json().detail).toMatch(/file store failed .*not saved/);
    expect(await t.run(() => Attachment().query().filter({ name: 'x.txt' }).count())).toBe(0);
  });

  it('decodes base64, base64url and data: URLs strictly', () => {
    expect(decodeBase64(b64('hi there'), 100).bytes.toString()).toBe('hi there');
    expect(decodeBase64(Buffer.from('??>>').toString('base64url'), 100).bytes.toString()).toBe('??>>');
    expect(decodeBase64(`data:image/png;base64,${b64('png')}`, 100)).toMatchObject({ mimetype: 'image/png' });
    expect(() => decodeBase64('abc$', 100)).toThrow(/not valid base64/);
    expect(() => decodeBase64('a', 100)).toThrow(/not valid base64/);
    expect(() => decodeBase64(42, 100)).toThrow(/base64 string/);
    expect(() => decodeBase64(b64('12345'), 4)).toThrow(/upload limit/);
  });
});

void withEnv;
