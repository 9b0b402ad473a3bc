/**
 * Who may fetch a file (spec §5, §4.7; docs/decisions.md, Files):
 *  - a file with an owner (`model` + `record`) is readable by whoever can read the owning record —
 *    neither the Attachment right nor Attachment record rules decide it; a file without owner falls
 *    back to the Attachment right and rules (Odoo's ir.attachment semantics);
 *  - an invalid or expired signature is no refusal by itself: a credential that can read the file
 *    still gets it; only when that fails too is it 403;
 *  - the signature covers the database; a credential plus `?db=` naming another database is 400;
 *  - on a bucket, `view` redirects with an inline disposition;
 *  - `remove_from_attachment` over HTTP without its three arguments is a 400 UserError;
 *  - `FF_FILESTORE` parsing (`filestoreFromUrl`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentEnv } from '../../src/orm/env.js';
import { filestoreFromUrl } from '../../src/files/filestore-config.js';
import { LocalFileStore } from '../../src/files/local-filestore.js';
import { S3FileStore } from '../../src/files/s3-filestore.js';
import { signedFileUrl } from '../../src/files/signed-url.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { cloneDatabase, dropDatabase } from '../../src/platform/database-lifecycle.js';
import { adminAccessYaml, writeProbeModule } from '../support/probe-module.js';
import { startTestBucket, type TestBucket } from '../support/s3-bucket.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const PROBE = `
import { Model, fields } from 'fieldforge';
export class FileOwner extends Model {
  static override fields = { name: fields.Char({ required: true }), doc: fields.File() };
}
`;
const HIDDEN = 'Hidden';
const BAD_LINK = /invalid or has expired/;

let tmp: string;
let bucket: TestBucket;
let s3store: S3FileStore;
let local: LocalFileStore;
let t: TestDatabase;
/** A second database, a clone of `t` (same attachment ids), for the signature's `db`. */
let clone = '';
const keys = {
  /** core.group_user: reads attachments, not FileOwner records. */
  user: '',
  /** Reads FileOwner records and nothing else: no right on Attachment at all. */
  ownerOnly: '',
  /** Administrator whose group rules hide FileOwner records and attachments named "Hidden…". */
  restricted: '',
};
const files = {
  /** Owned by a FileOwner every key above but `user` can read. */
  open: 0,
  /** Owned by a FileOwner the restricted key's rule hides. */
  hiddenOwner: 0,
  /** Named "Hidden…" (the Attachment rule would hide it) but owned by a readable FileOwner. */
  hiddenNameOpenOwner: 0,
  /** No owner. */
  plain: 0,
  /** No owner, named "Hidden…". */
  hiddenPlain: 0,
  /** Owner record that does not exist / owner model that does not exist. */
  goneOwner: 0,
  unknownModel: 0,
};
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ff-file-access-'));
  bucket = await startTestBucket(tmp, 'ff-access');
  s3store = bucket.store;
  local = new LocalFileStore(join(tmp, 'disk'));
  const root = join(tmp, 'modules');
  await writeProbeModule(root, 'file_access', { 'models/index.ts': PROBE, 'security/access.yaml': adminAccessYaml(['FileOwner']) });
  t = await testDatabase('core', [root]);
  await t.platform.install(t.name, { init: ['file_access'] });
  t.platform.files.configure({ store: local, uploadLimit: 1 << 20 });

  await t.run(async () => {
    const { registry } = currentEnv();
    const Owner = registry.meta('FileOwner').cls as any;
    const Attachment = registry.meta('Attachment').cls as any;
    const Group = registry.meta('Group').cls as any;
    const RecordRule = registry.meta('RecordRule').cls as any;
    const open = (await Owner.create({ name: 'Open owner', doc: { name: 'open.txt', base64: b64('open bytes') } })).id;
    const hidden = (await Owner.create({ name: `${HIDDEN} owner`, doc: { name: 'secret.txt', base64: b64('hidden owner bytes') } })).id;
    const ownedBy = async (owner: number) => (await Attachment.query().filter({ model: 'FileOwner', record: owner }).first()).id as number;
    files.open = await ownedBy(open);
    files.hiddenOwner = await ownedBy(hidden);
    files.hiddenNameOpenOwner = await Attachment.create_from_file(b64('hidden name bytes'), `${HIDDEN} name.txt`, 'FileOwner', open, 'extra');
    files.plain = await Attachment.create_from_file(b64('plain bytes'), 'plain.txt');
    files.hiddenPlain = await Attachment.create_from_file(b64('hidden plain bytes'), `${HIDDEN} plain.txt`);
    files.goneOwner = await Attachment.create_from_file(b64('orphan bytes'), 'orphan.txt', 'FileOwner', 999_999, 'doc');
    files.unknownModel = await Attachment.create_from_file(b64('unknown model bytes'), 'unknown.txt', 'NoSuchModel', open, 'doc');
    const group = (await Group.create({ name: 'Files restricted', identifier: 'file_access.group_restricted' })).id;
    await RecordRule.create_many([
      { name: 'Files: hide owners', model: 'FileOwner', filter: `~Q(name__startswith='${HIDDEN}')`, groups: [group] },
      { name: 'Files: hide attachments', model: 'Attachment', filter: `~Q(name__startswith='${HIDDEN}')`, groups: [group] },
    ]);
    keys.user = (await createServiceAccountKey({ name: 'files user', groups: ['core.group_user'] })).key;
    keys.ownerOnly = (await createServiceAccountKey({
      name: 'files owner reader', groups: ['core.group_admin'], scopes: [{ model: 'FileOwner', perms: ['read'] }],
    })).key;
    keys.restricted = (await createServiceAccountKey({
      name: 'files restricted', groups: ['core.group_admin', 'core.group_user', 'file_access.group_restricted'],
    })).key;
  });
});
afterAll(async () => {
  if (clone) await dropDatabase(t.platform, clone).catch(() => {});
  await t?.close();
  await bucket?.close();
  await rm(tmp, { recursive: true, force: true });
});

const get = (url: string, key?: string, headers: Record<string, string> = {}) => t.app.inject({
  method: 'GET', url, headers: { 'x-db-name': t.name, ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
});
/** Status of the served file and of the signed-URL route for `key`. */
async function statuses(key: string, id: number): Promise<[number, number]> {
  return [(await get(`/filestore/view/${id}`, key)).statusCode, (await get(`/api/files/${id}/url`, key)).statusCode];
}

describe('a file is readable through its owning record; a file without owner through Attachment', () => {
  it('reading the owner is enough: no right on Attachment needed', async () => {
    const served = await get(`/filestore/view/${files.open}`, keys.ownerOnly);
    expect(served.statusCode, served.body).toBe(200);
    expect(served.body).toBe('open bytes');
    const url = await get(`/api/files/${files.open}/url`, keys.ownerOnly);
    expect(url.statusCode, url.body).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: url.json().url })).body).toBe('open bytes');
    // Without owner, the Attachment right decides: this key has none (403, as for any model).
    expect(await statuses(keys.ownerOnly, files.plain)).toEqual([403, 403]);
    expect((await get(`/filestore/view/${files.plain}`, keys.ownerOnly)).json()).toMatchObject({ error: 'AccessError' });
  });

  it("the owner's record rules decide an owned file; the Attachment rules only a file without owner", async () => {
    expect(await statuses(keys.restricted, files.open)).toEqual([200, 200]);
    // The owning record is hidden by a rule: the file does not exist for the caller.
    expect(await statuses(keys.restricted, files.hiddenOwner)).toEqual([404, 404]);
    // An Attachment rule would hide this one, but its owner is readable.
    expect(await statuses(keys.restricted, files.hiddenNameOpenOwner)).toEqual([200, 200]);
    expect((await get(`/filestore/view/${files.hiddenNameOpenOwner}`, keys.restricted)).body).toBe('hidden name bytes');
    // Without owner the Attachment rules apply.
    expect(await statuses(keys.restricted, files.plain)).toEqual([200, 200]);
    expect(await statuses(keys.restricted, files.hiddenPlain)).toEqual([404, 404]);
    // Control: the administrator without those rules reads all of them.
    for (const id of [files.hiddenOwner, files.hiddenNameOpenOwner, files.hiddenPlain]) {
      expect(await statuses(t.apiKey, id)).toEqual([200, 200]);
    }
  });

  it('the Attachment right does not open a file whose owner the caller cannot read', async () => {
    expect(await statuses(keys.user, files.open)).toEqual([404, 404]);
    expect(await statuses(keys.user, files.plain)).toEqual([200, 200]);
  });

  it('fails closed: an owner record that is gone, or a model that does not exist, hides the file', async () => {
    expect(await statuses(t.apiKey, files.goneOwner)).toEqual([404, 404]);
    expect(await statuses(t.apiKey, files.unknownModel)).toEqual([404, 404]);
  });
});

describe('an invalid or expired signature falls through to the credential', () => {
  const tampered = (url: string) => url.replace(/sig=[\w-]+/, 'sig=AAAA');

  it('a credential that can read the file still gets it', async () => {
    const expired = signedFileUrl(t.platform.secret, t.name, files.plain, 'view', -1);
    for (const url of [expired, tampered(signedFileUrl(t.platform.secret, t.name, files.plain, 'view'))]) {
      const res = await get(url, keys.user);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      expect(res.body).toBe('plain bytes');
    }
  });

  it('403 when the credential cannot read it either; 403 without credential; 401 for a bad credential', async () => {
    const expired = signedFileUrl(t.platform.secret, t.name, files.open, 'view', -1);
    const unreadable = await get(expired, keys.user);
    expect(unreadable.statusCode).toBe(403);
    expect(unreadable.json()).toMatchObject({ error: 'AccessError' });
    expect(unreadable.json().detail).toMatch(BAD_LINK);
    const noCredential = await get(tampered(signedFileUrl(t.platform.secret, t.name, files.plain, 'view')));
    expect(noCredential.statusCode).toBe(403);
    expect(noCredential.json().detail).toMatch(BAD_LINK);
    expect((await get(expired, 'ff_wrong')).statusCode).toBe(401);
    // No signature at all and no credential stays 401.
    expect((await get(`/filestore/view/${files.plain}`)).statusCode).toBe(401);
  });
});

describe('the database of a file link', () => {
  beforeAll(async () => {
    clone = `${t.name}_sig`;
    await cloneDatabase(t.platform, t.name, clone);
  });

  it('the signature covers db: the same link naming another database (holding the same id) is 403', async () => {
    const url = signedFileUrl(t.platform.secret, t.name, files.plain, 'view');
    expect((await t.app.inject({ method: 'GET', url })).body).toBe('plain bytes');
    const moved = url.replace(`db=${t.name}`, `db=${clone}`);
    expect(moved).not.toBe(url);
    const res = await t.app.inject({ method: 'GET', url: moved });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toMatch(BAD_LINK);
    // The clone has that attachment: a link signed for the clone serves it.
    const own = await t.app.inject({ method: 'GET', url: signedFileUrl(t.platform.secret, clone, files.plain, 'view') });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.body).toBe('plain bytes');
  });

  it('a credential plus ?db= naming another database than the credential is 400', async () => {
    const res = await get(`/filestore/view/${files.plain}?db=${clone}`, keys.user);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'BadRequest' });
    expect(res.json().detail).toMatch(/db parameter names another database/);
    // Also when an (invalid) signature comes along; the credential's own database is served.
    const expired = signedFileUrl(t.platform.secret, clone, files.plain, 'view', -1);
    expect((await get(expired, keys.user)).statusCode).toBe(400);
    expect((await get(`/filestore/view/${files.plain}?db=${t.name}`, keys.user)).statusCode).toBe(200);
  });
});

describe('bucket storage', () => {
  it('view redirects to a presigned URL with an inline disposition; the bucket answers inline', async () => {
    t.platform.files.configure({ store: s3store });
    try {
      const PNG = Buffer.from('\x89PNG fake image');
      const id = await t.run<number>(() => (currentEnv().registry.meta('Attachment').cls as any).create_from_file(b64(PNG), 'photo été.png'));
      const link = await t.api('GET', `/api/files/${id}/url`);
      expect(link.json().url).toMatch(/^\/filestore\/view\//);
      const res = await t.app.inject({ method: 'GET', url: link.json().url });
      expect(res.statusCode).toBe(302);
      const target = new URL(res.headers.location as string);
      const disposition = `inline; filename="photo e_te_.png"; filename*=UTF-8''${encodeURIComponent('photo été.png')}`;
      expect(target.searchParams.get('response-content-disposition')).toBe(disposition);
      expect(target.searchParams.get('response-content-type')).toBe('image/png');
      const fetched = await fetch(target);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-disposition')).toBe(disposition);
      expect(Buffer.from(await fetched.arrayBuffer()).equals(PNG)).toBe(true);
      // An expired link with a credential that can read the file redirects too.
      const late = await get(signedFileUrl(t.platform.secret, t.name, id, 'download', -1), keys.user);
      expect(late.statusCode).toBe(302);
      expect(new URL(late.headers.location as string).searchParams.get('response-content-disposition')).toMatch(/^attachment; /);
    } finally {
      t.platform.files.configure({ store: local });
    }
  });
});

describe('remove_from_attachment over HTTP', () => {
  it('without all three arguments: 400 UserError, nothing removed; with them: removed', async () => {
    const owner = (await t.api('POST', '/api/create/FileOwner', { name: 'remove me', doc: { name: 'r.txt', base64: b64('remove') } })).json().id;
    const count = () => t.run(() => (currentEnv().registry.meta('Attachment').cls as any).query().filter({ model: 'FileOwner', record: owner }).count());
    expect(await count()).toBe(1);
    for (const inputs of [{}, { model: 'FileOwner', record: owner }, { model: 'FileOwner', field: 'doc' }, { record: owner, field: 'doc' }]) {
      const res = await t.api('POST', '/api/execute/Attachment/remove_from_attachment', { request_body: { inputs } });
      expect(res.statusCode, JSON.stringify(inputs)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'UserError', detail: 'remove_from_attachment needs model, record and field' });
    }
    expect(await count()).toBe(1);
    const ok = await t.api('POST', '/api/execute/Attachment/remove_from_attachment', {
      request_body: { inputs: { model: 'FileOwner', record: owner, field: 'doc' } },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await count()).toBe(0);
  });
});

describe('FF_FILESTORE', () => {
  const env = { S3_ENDPOINT: 'http://s3.example.test', S3_REGION: 'eu-west-3', AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' };
  const presign = (store: S3FileStore) => store.presignedUrl('db/ab/cd/key', {
    contentType: 'text/plain', contentDisposition: 'inline', cacheControl: 'private', expiresIn: 60,
  });

  it('s3://bucket/prefix names the bucket and the key prefix; virtual-hosted unless path style is asked', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = 'AK';
    process.env.AWS_SECRET_ACCESS_KEY = 'SK';
    try {
      const store = filestoreFromUrl('s3://ff-bucket/tenants/files/', env) as S3FileStore;
      expect(store).toBeInstanceOf(S3FileStore);
      expect([store.bucket, store.prefix]).toEqual(['ff-bucket', 'tenants/files']);
      const hosted = new URL(await presign(store));
      expect(hosted.host).toBe('ff-bucket.s3.example.test');
      expect(hosted.pathname).toBe('/tenants/files/db/ab/cd/key');
      expect(hosted.searchParams.get('X-Amz-Credential')).toContain('/eu-west-3/s3/');
      for (const flag of ['1', 'true']) {
        const pathStyle = filestoreFromUrl('s3://ff-bucket/tenants', { ...env, S3_FORCE_PATH_STYLE: flag }) as S3FileStore;
        const url = new URL(await presign(pathStyle));
        expect(url.host).toBe('s3.example.test');
        expect(url.pathname).toBe('/ff-bucket/tenants/db/ab/cd/key');
      }
      const bare = filestoreFromUrl('s3://ff-bucket', env) as S3FileStore;
      expect([bare.bucket, bare.prefix]).toEqual(['ff-bucket', '']);
      expect(filestoreFromUrl(`file:${join(tmp, 'x')}`, env)).toBeInstanceOf(LocalFileStore);
    } finally {
      for (const [name, value] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('a bad value is refused with the expected form and what is wrong', () => {
    const form = /FF_FILESTORE must be file:<dir> or s3:\/\/<bucket>\[\/<prefix>\]/;
    for (const [value, why] of [
      ['/var/lib/files', /got '\/var\/lib\/files': unknown scheme/],
      ['ftp://host/files', /unknown scheme/],
      ['S3://bucket', /unknown scheme/],
      ['s3://', /'' is not a bucket name/],
      ['s3:///prefix', /'' is not a bucket name/],
      ['s3://My_Bucket/x', /'My_Bucket' is not a bucket name/],
      ['s3://bucket/a//b', /empty segment/],
      ['file:', /directory is empty/],
    ] as const) {
      expect(() => filestoreFromUrl(value, env), value).toThrow(form);
      expect(() => filestoreFromUrl(value, env), value).toThrow(why);
    }
  });
});

describe('changing a file takes the right to change its owning record (Odoo ir.attachment)', () => {
  const owners = { open: 0, hidden: 0 };
  const api = (method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => t.app.inject({
    method, url, headers: { 'x-db-name': t.name, authorization: `Bearer ${keys.restricted}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
  const ownerOf = (id: number) => t.run(async () => {
    const [row] = await (currentEnv().registry.meta('Attachment').cls as any).query({ id }).read(['model', 'record']);
    return row ? [row.model, row.record] : null;
  });

  beforeAll(async () => {
    await t.run(async () => {
      const Owner = currentEnv().registry.meta('FileOwner').cls as any;
      owners.open = (await Owner.query({ name: 'Open owner' }).first()).id;
      owners.hidden = (await Owner.query({ name: `${HIDDEN} owner` }).first()).id;
    });
  });

  it('re-pointing a file away from, or to, a record the caller may not change is refused and changes nothing', async () => {
    const away = await api('PUT', `/api/update/Attachment/${files.hiddenOwner}`, { model: null, record: null });
    expect(away.statusCode, away.body).toBe(404);
    expect(await ownerOf(files.hiddenOwner)).toEqual(['FileOwner', owners.hidden]);
    expect(await statuses(keys.restricted, files.hiddenOwner)).toEqual([404, 404]);
    const onto = await api('PUT', `/api/update/Attachment/${files.open}`, { record: owners.hidden });
    expect(onto.statusCode, onto.body).toBe(404);
    expect(await ownerOf(files.open)).toEqual(['FileOwner', owners.open]);
  });

  it('creating a file on, or deleting one from, a record the caller may not change is refused; on its own records it works', async () => {
    const refused = await api('POST', '/api/create/Attachment', { name: 'planted.txt', base64: b64('planted'), model: 'FileOwner', record: owners.hidden });
    expect(refused.statusCode, refused.body).toBe(404);
    expect(await t.run(() => (currentEnv().registry.meta('Attachment').cls as any).query({ name: 'planted.txt' }).count())).toBe(0);
    expect((await api('DELETE', `/api/delete/Attachment/${files.hiddenOwner}`)).statusCode).toBe(404);
    expect(await ownerOf(files.hiddenOwner)).not.toBeNull();
    const unknown = await api('POST', '/api/create/Attachment', { name: 'x.txt', base64: b64('x'), model: 'NoSuchModel', record: 1 });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ error: 'ValidationError', detail: expect.stringContaining('no such model') });
    const allowed = await api('POST', '/api/create/Attachment', { name: 'mine.txt', base64: b64('mine'), model: 'FileOwner', record: owners.open });
    expect(allowed.statusCode, allowed.body).toBe(200);
  });
});

describe('listing attachments follows their owners too (Model._owned_by)', () => {
  const listed = async (key: string | undefined, ids: number[]) => {
    const res = await t.app.inject({
      method: 'POST', url: '/api/query/Attachment',
      headers: { 'x-db-name': t.name, 'content-type': 'application/json', authorization: `Bearer ${key ?? t.apiKey}` },
      payload: JSON.stringify({ filter_str: `Q(id__in=[${ids.join(', ')}])`, fields: ['id'], counter: true }),
    });
    expect(res.statusCode, res.body).toBe(200);
    const { count, data } = res.json();
    expect(data).toHaveLength(count);
    return data.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b);
  };
  const all = () => [files.open, files.hiddenOwner, files.plain, files.goneOwner, files.unknownModel];

  it('a rule hiding the owner hides its files from queries, counts and fetch; files without owner stay', async () => {
    expect(await listed(keys.restricted, all())).toEqual([files.open, files.plain].sort((a, b) => a - b));
    const fetched = await t.app.inject({
      method: 'POST', url: `/api/fetch/Attachment/${files.hiddenOwner}`,
      headers: { 'x-db-name': t.name, 'content-type': 'application/json', authorization: `Bearer ${keys.restricted}` },
      payload: JSON.stringify({ fields: ['name'] }),
    });
    expect(fetched.statusCode).toBe(404);
  });

  it('no right on the owner model: none of its files; an administrator lists every file whose owner model exists', async () => {
    expect(await listed(keys.user, all())).toEqual([files.plain]);
    expect(await listed(undefined, all())).toEqual([files.open, files.hiddenOwner, files.plain, files.goneOwner].sort((a, b) => a - b));
  });
});
