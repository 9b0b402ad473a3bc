/**
 * File routes (spec §4.7, §5): signed URLs from `/api/files/{id}/url`, and `/filestore/{action}/{id}`
 * granted for public files, valid unexpired signatures, or a caller who can read the attachment
 * and its owning record; served with type, disposition, caching, ETag and Range from disk, or as a
 * redirect to a presigned URL of an S3-protocol server (s3rver) carrying the same choices.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentEnv } from '../../src/orm/env.js';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import { S3FileStore } from '../../src/files/s3-filestore.js';
import { signedFileUrl } from '../../src/files/signed-url.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { startTestBucket, type TestBucket } from '../support/s3-bucket.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE = `
import { Model, fields } from 'fieldforge';
export class FileOwner extends Model {
  static override fields = { name: fields.Char({ required: true }), doc: fields.File() };
}
`;

let tmp: string;
let bucket: TestBucket;
let s3store: S3FileStore;
let local: LocalFileStore;
let t: TestDatabase;
let userKey: string;
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const CONTENT = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ff-file-routes-'));
  bucket = await startTestBucket(tmp, 'ff-routes');
  s3store = bucket.store;
  local = new LocalFileStore(join(tmp, 'disk'));
  const root = join(tmp, 'modules');
  await writeProbeModule(root, 'file_owner', { 'models/index.ts': PROBE, 'security/access.yaml': adminAccessYaml(['FileOwner']) });
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['file_owner'] });
  t.platform.files.configure({ store: local, uploadLimit: 1 << 20 });
  // A plain user: reads attachments, but not FileOwner records.
  userKey = (await t.run(() => createServiceAccountKey({ name: 'plain user', groups: ['core.group_user'] }))).key;
});
afterAll(async () => {
  await t?.close();
  await bucket?.close();
  await rm(tmp, { recursive: true, force: true });
});

const Attachment = () => currentEnv().registry.meta('Attachment').cls as any;
const anonymous = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { 'x-db-name': t.name, ...headers } });
const asUser = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { 'x-db-name': t.name, authorization: `Bearer ${userKey}`, ...headers } });

describe('local disk', () => {
  let fileId: number;
  let ownedId: number;
  let publicId: number;
  beforeAll(async () => {
    t.platform.files.configure({ store: local });
    fileId = await t.run(() => Attachment().create_from_file(b64(CONTENT), 'rapport "final"\r\n/../été.pdf'));
    publicId = await t.run(() => Attachment().create_from_file(b64('public bytes'), 'logo.png', null, null, null, true));
    const owner = (await t.api('POST', '/api/create/FileOwner', { name: 'o', doc: { name: 'secret.txt', base64: b64('secret') } })).json().id;
    ownedId = (await t.run(async () => (await Attachment().query().filter({ model: 'FileOwner', record: owner }).first()) as { id: number })).id;
  });

  it('hands out a signed URL that serves the bytes without a credential, and only until it expires', async () => {
    const res = await t.api('GET', `/api/files/${fileId}/url`);
    expect(res.statusCode, res.body).toBe(200);
    const { url, expires_at } = res.json();
    expect(url).toMatch(new RegExp(`^/filestore/view/${fileId}\\?db=${t.name}&expires=\\d+&sig=[\\w-]+$`));
    expect(Date.parse(expires_at)).toBeGreaterThan(Date.now());
    const served = await t.app.inject({ method: 'GET', url });
    expect(served.statusCode).toBe(200);
    expect(served.rawPayload.equals(CONTENT)).toBe(true);
    expect(served.headers['content-type']).toBe('application/pdf');
    expect(served.headers['content-disposition']).toBe(
      `inline; filename="e_te_.pdf"; filename*=UTF-8''${encodeURIComponent('été.pdf')}`,
    );
    // Tampering with the id, the action or the expiry breaks the signature.
    const q = new URL(url, 'http://x').searchParams;
    for (const bad of [
      url.replace(`/view/${fileId}`, `/view/${publicId + 1000}`),
      url.replace('/view/', '/download/'),
      url.replace(/expires=\d+/, `expires=${Number(q.get('expires')) + 10}`),
      url.replace(/sig=[\w-]+/, 'sig=AAAA'),
    ]) {
      const r = await t.app.inject({ method: 'GET', url: bad });
      expect([403, 404], `${bad}: ${r.body}`).toContain(r.statusCode);
      expect(r.rawPayload.equals(CONTENT)).toBe(false);
    }
    const expired = signedFileUrl(t.platform.secret, t.name, fileId, 'view', -1);
    const late = await t.app.inject({ method: 'GET', url: expired });
    expect(late.statusCode).toBe(403);
    expect(late.json().detail).toMatch(/invalid or has expired/);
  });

  it('refuses a private file without credential or signature; serves a public one to anyone', async () => {
    const none = await anonymous(`/filestore/view/${fileId}`);
    expect(none.statusCode).toBe(401);
    const pub = await anonymous(`/filestore/view/${publicId}`);
    expect(pub.statusCode).toBe(200);
    expect(pub.body).toBe('public bytes');
    expect(pub.headers['content-type']).toBe('image/png');
    expect(pub.headers['cache-control']).toBe('public, max-age=86400');
  });

  it('serves to a caller who can read the attachment and its owning record, 404 otherwise', async () => {
    const admin = await t.app.inject({ method: 'GET', url: `/filestore/download/${ownedId}`, headers: { 'x-db-name': t.name, authorization: `Bearer ${t.apiKey}` } });
    expect(admin.statusCode).toBe(200);
    expect(admin.body).toBe('secret');
    expect(admin.headers['content-disposition']).toMatch(/^attachment; filename="secret.txt"/);
    expect(admin.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(admin.headers['cache-control']).toBe('private, max-age=3600');
    // The plain user reads attachments but not FileOwner records.
    expect((await asUser(`/filestore/view/${fileId}`)).statusCode).toBe(200);
    expect((await asUser(`/filestore/view/${ownedId}`)).statusCode).toBe(404);
    expect((await asUser(`/api/files/${ownedId}/url`)).statusCode).toBe(404);
    expect((await asUser(`/filestore/view/999999`)).statusCode).toBe(404);
    expect((await asUser(`/filestore/view/${fileId}`, { authorization: 'Bearer ff_wrong' })).statusCode).toBe(401);
    expect((await asUser(`/filestore/edit/${fileId}`)).statusCode).toBe(404);
    // No read right on Attachment at all: 403, as for any model.
    const nobody = (await t.run(() => createServiceAccountKey({ name: 'no rights', groups: ['core.group_user'], scopes: [{ model: 'Company', perms: ['read'] }] }))).key;
    const noRight = await t.app.inject({ method: 'GET', url: `/api/files/${fileId}/url`, headers: { 'x-db-name': t.name, authorization: `Bearer ${nobody}` } });
    expect(noRight.statusCode).toBe(403);
    const noRightServe = await t.app.inject({ method: 'GET', url: `/filestore/view/${fileId}`, headers: { 'x-db-name': t.name, authorization: `Bearer ${nobody}` } });
    expect(noRightServe.statusCode).toBe(403);
  });

  it('answers Range requests with 206 and the exact slice, 416 outside the file, 304 on a matching ETag', async () => {
    const part = await asUser(`/filestore/view/${fileId}`, { range: 'bytes=100-199' });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${CONTENT.length}`);
    expect(part.rawPayload.equals(CONTENT.subarray(100, 200))).toBe(true);
    const tail = await asUser(`/filestore/view/${fileId}`, { range: 'bytes=-10' });
    expect(tail.rawPayload.equals(CONTENT.subarray(CONTENT.length - 10))).toBe(true);
    const outside = await asUser(`/filestore/view/${fileId}`, { range: `bytes=${CONTENT.length}-` });
    expect(outside.statusCode).toBe(416);
    expect(outside.headers['content-range']).toBe(`bytes */${CONTENT.length}`);
    const full = await asUser(`/filestore/view/${fileId}`);
    expect(full.headers['accept-ranges']).toBe('bytes');
    expect(full.headers['content-length']).toBe(String(CONTENT.length));
    const again = await asUser(`/filestore/view/${fileId}`, { 'if-none-match': full.headers.etag as string });
    expect(again.statusCode).toBe(304);
  });

  it('413 with a clear message above the upload limit, through create and create_from_file', async () => {
    t.platform.files.configure({ uploadLimit: 100 });
    try {
      const res = await t.api('POST', '/api/create/Attachment', { name: 'big.bin', base64: b64(Buffer.alloc(101)) });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ error: 'PayloadTooLarge' });
      expect(res.json().detail).toMatch(/upload limit of 100 bytes \(FF_UPLOAD_LIMIT\)/);
      const exec = await t.api('POST', '/api/execute/Attachment/create_from_file', {
        request_body: { inputs: { file_content: b64(Buffer.alloc(101)), filename: 'big.bin' } },
      });
      expect(exec.statusCode).toBe(413);
      const ok = await t.api('POST', '/api/execute/Attachment/create_from_file', {
        request_body: { inputs: { file_content: b64('small'), filename: 'small.txt' } },
      });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(typeof ok.json().result).toBe('number');
    } finally {
      t.platform.files.configure({ uploadLimit: 1 << 20 });
    }
  });
});

describe('S3 bucket', () => {
  it('redirects to a presigned URL carrying type, disposition and caching; the bucket serves the bytes', async () => {
    t.platform.files.configure({ store: s3store });
    try {
      const id = await t.run(() => Attachment().create_from_file(b64(CONTENT), 'report.pdf'));
      const { url } = (await t.api('GET', `/api/files/${id}/url?action=download`)).json();
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(302);
      expect(res.headers['cache-control']).toBe('private, no-store');
      const target = new URL(res.headers.location as string);
      expect(target.pathname).toMatch(new RegExp(`/ff-routes/${t.name}/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{64}$`));
      expect(target.searchParams.get('response-content-disposition')).toMatch(/^attachment; filename="report.pdf"/);
      expect(target.searchParams.get('response-content-type')).toBe('application/pdf');
      expect(target.searchParams.get('response-cache-control')).toBe('private, max-age=3600');
      expect(Number(target.searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(60);
      const fetched = await fetch(target);
      expect(fetched.status).toBe(200);
      expect(Buffer.from(await fetched.arrayBuffer()).equals(CONTENT)).toBe(true);
      expect(fetched.headers.get('content-disposition')).toMatch(/^attachment; filename="report.pdf"/);
      expect(fetched.headers.get('content-type')).toBe('application/pdf');
      // Without signature or credential: no redirect.
      expect((await anonymous(`/filestore/view/${id}`)).statusCode).toBe(401);
    } finally {
      t.platform.files.configure({ store: local });
    }
  });
});
