/**
 * The life of stored bytes beyond one row (spec §2.4, ARCHITECTURE §9): `fieldforge files sweep`
 * as a real process, the sweep running by itself after a commit, replacing an attachment's content
 * through the API, and a clone made by the platform's own clone function keeping the bytes its
 * source deleted.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import { storageKey } from '../../src/files/content-address.js';
import { queueRemoval, sweep } from '../../src/files/file-removal.js';
import { REMOVAL_TABLE } from '../../src/orm/system/removal-queue.js';
import { signedFileUrl } from '../../src/files/signed-url.js';
import { cloneDatabase, dropDatabase } from '../../src/platform/database-lifecycle.js';
import { runCli } from '../support/cli.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';


let tmp: string;
let local: LocalFileStore;
let t: TestDatabase;

const b64 = (s: string) => Buffer.from(s).toString('base64');
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const keyOf = (content: string) => storageKey(t.name, sha(content));
const exists = async (key: string) => (await local.stat(key)) !== null;
const runSweep = async () => sweep(await t.platform.database(t.name), t.platform.files);

/** Polls `check` until true or `ms` pass; true when it held in time. */
async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

async function upload(name: string, content: string): Promise<number> {
  const res = await t.api('POST', '/api/create/Attachment', { name, base64: b64(content) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

async function fileFields(id: number): Promise<{ checksum: string; filepath: string; file_size: number }> {
  const res = await t.api('POST', `/api/fetch/Attachment/${id}`, { fields: ['checksum', 'filepath', 'file_size'] });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function cli(args: string[], env: Record<string, string> = {}) {
  return runCli(args, { FF_DATA_DIR: join(tmp, 'data'), FF_FILESTORE: `file:${join(tmp, 'disk')}`, ...env });
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ff-file-life-'));
  local = new LocalFileStore(join(tmp, 'disk'));
  t = await testDatabase('core');
  t.platform.files.configure({ store: local, uploadLimit: 1 << 20 });
});
afterAll(async () => {
  await t?.close();
  await rm(tmp, { recursive: true, force: true });
});

// First: nothing in this process has uploaded or deleted yet, so no background sweep of this
// database can take the queued key before the command does.
describe('fieldforge files sweep', () => {
  it('removes the queued bytes no row uses, keeps the used ones, empties the queue', async () => {
    const db = await t.platform.database(t.name);
    // What a server that stopped before its background sweep leaves: queued keys, one still used.
    const gone = 'queued, no row left';
    const used = 'queued, but a row uses it';
    await local.put(keyOf(gone), Buffer.from(gone));
    await local.put(keyOf(used), Buffer.from(used));
    await sql`INSERT INTO attachment (name, checksum, filepath, file_size)
      VALUES ('used.txt', ${sha(used)}, ${keyOf(used)}, ${used.length})`.execute(db.executor);
    await queueRemoval(db.executor, [keyOf(gone), keyOf(used)]);

    const run = await cli(['files', 'sweep', '-db', t.name]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Database '${t.name}': removed 1 file(s), 0 still in use or busy`);
    expect(await exists(keyOf(gone))).toBe(false);
    expect(await exists(keyOf(used))).toBe(true);
    const queue = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(REMOVAL_TABLE)}`.execute(db.executor);
    expect(queue.rows[0]!.n).toBe(0);
  });

  it('needs -db NAME; a malformed FF_FILESTORE is a clear error', async () => {
    const [noDb, badStore] = await Promise.all([
      cli(['files', 'sweep']),
      cli(['files', 'sweep', '-db', t.name], { FF_FILESTORE: 'ftp://files.example.test/x' }),
    ]);
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toContain('files sweep needs -db NAME');
    expect(badStore.code).not.toBe(0);
    expect(badStore.stderr).toContain("FF_FILESTORE must be file:<dir> or s3://<bucket>[/<prefix>], got 'ftp://files.example.test/x'");
  });
});

describe('the sweep runs by itself', () => {
  it('after a delete commits, the bytes disappear within seconds without anyone calling sweep', async () => {
    const content = 'swept without being asked';
    // Bytes already in the store: the upload writes nothing fresh, so it schedules no sweep of its
    // own (whose retries could otherwise remove them): only the delete's after-commit sweep can.
    await local.put(keyOf(content), Buffer.from(content));
    const id = await upload('auto.txt', content);
    const { filepath } = await fileFields(id);
    expect(filepath).toBe(keyOf(content));
    expect(await exists(filepath)).toBe(true);
    expect((await t.api('DELETE', `/api/delete/Attachment/${id}`)).statusCode).toBe(200);
    expect(await eventually(async () => !(await exists(filepath)))).toBe(true);
  });
});

describe('replacing the content of an attachment', () => {
  it('PUT with new base64 changes checksum, filepath and file_size; the old bytes go once unused', async () => {
    const v1 = 'first version';
    const v2 = 'second version, longer than the first';
    const id = await upload('doc.txt', v1);
    // Another row with the first version's bytes keeps them through the first replacement.
    const keeper = await upload('copy.txt', v1);
    expect(await fileFields(id)).toMatchObject({ checksum: sha(v1), filepath: keyOf(v1), file_size: v1.length });
    const before = await t.api('GET', `/api/files/${id}/url`);
    const etagBefore = (await t.app.inject({ method: 'GET', url: before.json().url })).headers.etag;

    const put = await t.api('PUT', `/api/update/Attachment/${id}`, { base64: b64(v2) });
    expect(put.statusCode, put.body).toBe(200);
    expect(await fileFields(id)).toMatchObject({ checksum: sha(v2), filepath: keyOf(v2), file_size: v2.length });
    const served = await t.app.inject({ method: 'GET', url: (await t.api('GET', `/api/files/${id}/url`)).json().url });
    expect(served.body).toBe(v2);
    expect(served.headers.etag).not.toBe(etagBefore);
    await runSweep();
    expect(await exists(keyOf(v1))).toBe(true);
    expect(await exists(keyOf(v2))).toBe(true);

    // The other row lets go of the first version too: now the sweep removes it.
    const v3 = 'third version';
    expect((await t.api('PUT', `/api/update/Attachment/${keeper}`, { base64: b64(v3) })).statusCode).toBe(200);
    expect(await fileFields(keeper)).toMatchObject({ checksum: sha(v3), filepath: keyOf(v3), file_size: v3.length });
    await runSweep();
    expect(await exists(keyOf(v1))).toBe(false);
    expect(await exists(keyOf(v2))).toBe(true);
    expect(await exists(keyOf(v3))).toBe(true);
  });
});

describe('a clone made by the platform', () => {
  it('keeps serving a file its source deleted and swept; once the clone lets go, the source sweep removes it', async () => {
    const content = 'shared with the clone';
    const id = await upload('shared.txt', content);
    const key = keyOf(content);
    const clone = `${t.name}_lc`;
    await cloneDatabase(t.platform, t.name, clone);
    try {
      expect((await t.api('DELETE', `/api/delete/Attachment/${id}`)).statusCode).toBe(200);
      const swept = await runSweep();
      expect(swept.removed).not.toContain(key);
      expect(await exists(key)).toBe(true);
      // The clone serves the bytes: with a credential of the clone, and through a link signed for it.
      const served = await t.app.inject({
        method: 'GET', url: `/filestore/download/${id}`, headers: { 'x-db-name': clone, authorization: `Bearer ${t.apiKey}` },
      });
      expect(served.statusCode, served.body).toBe(200);
      expect(served.body).toBe(content);
      const linked = await t.app.inject({ method: 'GET', url: signedFileUrl(t.platform.secret, clone, id, 'view') });
      expect(linked.body).toBe(content);
      // The source's own link no longer resolves (its row is gone).
      expect((await t.app.inject({ method: 'GET', url: signedFileUrl(t.platform.secret, t.name, id, 'view') })).statusCode).toBe(404);

      const dropped = await t.api('DELETE', `/api/delete/Attachment/${id}`, undefined, { 'x-db-name': clone });
      expect(dropped.statusCode, dropped.body).toBe(200);
      await runSweep();
      expect(await exists(key)).toBe(false);
    } finally {
      await dropDatabase(t.platform, clone).catch(() => {});
    }
  });
});
