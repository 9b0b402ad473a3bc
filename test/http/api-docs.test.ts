/**
 * The per-database API reference over HTTP (spec §1, §5; CONTRACTS C2 "API reference"): share
 * administration (token shown once, stored hashed, administrators only, 400s), the cookie flow of
 * `/api-docs?token=…`, expiry and revocation shutting out cookies already issued, the stock
 * `/docs`, `/redoc`, `/openapi.json` absent, and the OpenAPI 3.1 document of a database with every
 * module installed — valid for a maintained validator, concrete per model, and truthful: real
 * answers of the API validate against the schemas it states.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { ModelAccess } from '../../modules/core/models/model_access.js';
import { docsCookieName } from '../../src/http/routes/api-docs.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let userKey: string;

beforeAll(async () => {
  t = await testDatabase('full');
  // "Every module": the full template holds core, contacts and project; sales completes the set.
  await t.platform.install(t.name, { init: ['sales'] });
  ({ key: userKey } = await t.run(() => createServiceAccountKey({ name: 'ordinary', groups: ['core.group_user'] })));
});
afterAll(async () => { await t?.close(); });

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
const unique = (label: string) => `${label} ${randomBytes(3).toString('hex')}`;

interface Created { id: number; name: string; token: string; url: string; expires_at: string | null }

async function share(body: Record<string, unknown> = {}): Promise<Created> {
  const res = await t.api('POST', '/api/api-docs-shares', { name: unique('share'), ...body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** A request to the docs routes as a browser sends it: no credential, the database by header. */
function docs(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url, headers: { 'x-db-name': t.name, ...headers } });
}

/** The cookie `GET /api-docs?token=…` issues, as a `cookie` header. */
async function cookieOf(token: string): Promise<string> {
  const res = await docs(`/api-docs?token=${encodeURIComponent(token)}`);
  expect(res.statusCode, res.body).toBe(302);
  const cookie = res.cookies.find((c) => c.name === docsCookieName(t.name))!;
  return `${cookie.name}=${cookie.value}`;
}

async function shareCount(): Promise<number> {
  const db = await t.platform.database(t.name);
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM api_docs_share`.execute(db.executor);
  return rows[0]!.n;
}

describe('share administration', () => {
  it('creates a share: the token and its absolute link shown once, only the SHA-256 hash stored', async () => {
    const created = await share({ name: 'Integration partner' });
    expect(Object.keys(created).sort()).toEqual(['expires_at', 'id', 'name', 'token', 'url']);
    expect(created).toMatchObject({ name: 'Integration partner', expires_at: null });
    expect(created.token).toMatch(/^ffdocs_[A-Za-z0-9_-]{43}$/);
    const url = new URL(created.url);
    expect(url.origin).toBe('http://localhost');
    expect(url.pathname).toBe('/api-docs');
    expect(url.searchParams.get('token')).toBe(created.token);
    // The host (localhost) does not name the database: the link does.
    expect(url.searchParams.get('db')).toBe(t.name);

    const db = await t.platform.database(t.name);
    const { rows } = await sql<Record<string, unknown>>`SELECT * FROM api_docs_share WHERE id = ${created.id}`.execute(db.executor);
    expect(rows[0]!.token).toBe(createHash('sha256').update(created.token).digest('hex'));
    expect(JSON.stringify(rows[0])).not.toContain(created.token);
  });

  it('lists shares newest first, never a token, and the generic API does not disclose the hash either', async () => {
    const created = await share({ expires_at: '2031-06-30T12:00:00Z' });
    expect(created.expires_at).toBe('2031-06-30T12:00:00.000Z');
    const res = await t.api('GET', '/api/api-docs-shares');
    expect(res.statusCode).toBe(200);
    const list = res.json() as Record<string, unknown>[];
    expect(list[0]).toMatchObject({ id: created.id, name: created.name, expires_at: '2031-06-30T12:00:00.000Z', active: true, last_used_at: null });
    expect(Object.keys(list[0]!).sort()).toEqual(['active', 'created_by', 'created_date', 'expires_at', 'id', 'last_used_at', 'name']);
    expect(res.body).not.toContain(created.token);
    expect(res.body).not.toContain(createHash('sha256').update(created.token).digest('hex'));

    const generic = await t.api('POST', `/api/fetch/ApiDocsShare/${created.id}`, {});
    expect(generic.statusCode).toBe(200);
    expect(generic.json()).not.toHaveProperty('token');
    expect(generic.body).not.toContain(createHash('sha256').update(created.token).digest('hex'));
    // What a share opens cannot be rewritten through the generic API: a revoked share stays revoked.
    await t.api('PUT', `/api/update/ApiDocsShare/${created.id}`, { active: false, expires_at: '2099-01-01T00:00:00Z', token: 'x' });
    expect((await t.api('GET', '/api/api-docs-shares')).json()[0]).toMatchObject({ id: created.id, active: true, expires_at: '2031-06-30T12:00:00.000Z' });
  });

  it.each([
    [{}, "'name' is required"],
    [{ name: '  ' }, "'name' is required"],
    [{ name: 42 }, "'name' must be a string"],
    [{ name: 'x'.repeat(256) }, "'name' may hold at most 255 characters"],
    [{ name: 'x', expire_at: '2030-01-01' }, "Unknown key 'expire_at': expected name, expires_at"],
    [{ name: 'x', expires_at: 'tomorrow' }, "'expires_at' must be an ISO 8601 date or date-time, e.g. 2030-01-31 or 2030-01-31T12:00:00Z"],
    [{ name: 'x', expires_at: 20300101 }, "'expires_at' must be an ISO 8601 date or date-time, e.g. 2030-01-31 or 2030-01-31T12:00:00Z"],
    [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, "'expires_at' must be in the future (got 2001-01-01T00:00:00.000Z)"],
  ])('refuses %j with a 400 and writes nothing', async (body, detail) => {
    const before = await shareCount();
    const res = await t.api('POST', '/api/api-docs-shares', body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ detail, error: 'BadRequest' });
    expect(await shareCount()).toBe(before);
  });

  it('refuses a body that is not an object', async () => {
    const res = await t.api('POST', '/api/api-docs-shares', ['x']);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('BadRequest');
  });

  it('is administrators\' business only: 403 for anyone else, whatever the body, and nothing written', async () => {
    const created = await share();
    const before = await shareCount();
    const as = (method: Method, url: string, body?: unknown) => t.api(method, url, body, { authorization: `Bearer ${userKey}` });
    for (const [method, url, body] of [
      ['POST', '/api/api-docs-shares', { name: 'mine' }],
      ['POST', '/api/api-docs-shares', { nonsense: true }],
      ['GET', '/api/api-docs-shares', undefined],
      ['DELETE', `/api/api-docs-shares/${created.id}`, undefined],
      ['POST', '/api/query/ApiDocsShare', {}],
    ] as const) {
      const res = await as(method, url, body);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(403);
      expect(res.json().error).toBe('AccessError');
    }
    expect(await shareCount()).toBe(before);
    expect((await t.api('GET', '/api/api-docs-shares')).json().find((s: { id: number }) => s.id === created.id).active).toBe(true);
    // No credential at all: 401.
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/api-docs-shares', headers: { 'x-db-name': t.name } });
    expect(anonymous.statusCode).toBe(401);
  });

  it('revokes: idempotent, the row kept for the record; an unknown or malformed id is a 404 / 400', async () => {
    const created = await share();
    for (let i = 0; i < 2; i++) {
      const res = await t.api('DELETE', `/api/api-docs-shares/${created.id}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ id: created.id, revoked: true });
    }
    expect((await t.api('GET', '/api/api-docs-shares')).json().find((s: { id: number }) => s.id === created.id).active).toBe(false);
    const missing = await t.api('DELETE', '/api/api-docs-shares/999999');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toBe('NotFound');
    expect((await t.api('DELETE', '/api/api-docs-shares/abc')).statusCode).toBe(400);
  });
});

describe('the /api-docs cookie flow', () => {
  it('trades the token for an HttpOnly cookie scoped to /api-docs and drops it from the URL', async () => {
    const created = await share();
    const res = await docs(`/api-docs?token=${created.token}`);
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/api-docs');
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toContain(`${docsCookieName(t.name)}=`);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/Path=\/api-docs(;|$)/);
    expect(setCookie).toMatch(/SameSite=Lax/i);

    const cookie = await cookieOf(created.token);
    const page = await docs('/api-docs', { cookie });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('/api-docs/assets/swagger-ui-bundle.js');
    expect(page.body).not.toMatch(/<script>(?!<\/script>)/); // no inline script: the CSP forbids it
    expect(page.body).not.toContain(created.token);

    const doc = await docs('/api-docs/openapi.json', { cookie });
    expect(doc.statusCode).toBe(200);
    expect(doc.json().openapi).toBe('3.1.0');
    // Used: stamped.
    expect((await t.api('GET', '/api/api-docs-shares')).json().find((s: { id: number }) => s.id === created.id).last_used_at).not.toBeNull();
  });

  it('follows the link exactly as shared (no X-DB-NAME): the database stays in the address, the token does not', async () => {
    const created = await share();
    const link = new URL(created.url);
    const res = await t.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`/api-docs?db=${t.name}`);
    const cookie = res.cookies.find((c) => c.name === docsCookieName(t.name))!;
    const page = await t.app.inject({ method: 'GET', url: `/api-docs?db=${t.name}`, headers: { cookie: `${cookie.name}=${cookie.value}` } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`data-spec-url="/api-docs/openapi.json?db=${t.name}"`);
    const doc = await t.app.inject({ method: 'GET', url: `/api-docs/openapi.json?db=${t.name}`, headers: { cookie: `${cookie.name}=${cookie.value}` } });
    expect(doc.statusCode).toBe(200);
  });

  it.each([
    ['no token', '/api-docs'],
    ['an empty token', '/api-docs?token='],
    ['a made-up token', `/api-docs?token=ffdocs_${'A'.repeat(43)}`],
    ['a malformed token', '/api-docs?token=not-a-token'],
    ['an API key', '/api-docs?token=APIKEY'],
  ])('answers the 401 page for %s, setting no cookie', async (_label, url) => {
    const res = await docs(url.replace('APIKEY', t.apiKey));
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('missing, invalid, expired or revoked');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('answers 401 {detail, error} for the document without a valid cookie', async () => {
    for (const headers of <Record<string, string>[]>[{}, { cookie: `${docsCookieName(t.name)}=ffdocs_${'B'.repeat(43)}` }, { authorization: `Bearer ${t.apiKey}` }]) {
      const res = await docs('/api-docs/openapi.json', headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: 'AuthenticationError' });
      expect(res.json().detail).toMatch(/API reference link/);
    }
  });

  it('shuts out a cookie already issued the moment its share is revoked', async () => {
    const created = await share();
    const cookie = await cookieOf(created.token);
    expect((await docs('/api-docs/openapi.json', { cookie })).statusCode).toBe(200);
    expect((await t.api('DELETE', `/api/api-docs-shares/${created.id}`)).statusCode).toBe(200);
    expect((await docs('/api-docs', { cookie })).statusCode).toBe(401);
    expect((await docs('/api-docs/openapi.json', { cookie })).statusCode).toBe(401);
    expect((await docs(`/api-docs?token=${created.token}`)).statusCode).toBe(401);
  });

  it('shuts out an expired share and its cookies; the cookie never outlives the share', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000);
    const created = await share({ expires_at: expiresAt.toISOString() });
    const res = await docs(`/api-docs?token=${created.token}`);
    const maxAge = Number(/Max-Age=(\d+)/i.exec(String(res.headers['set-cookie']))![1]);
    expect(maxAge).toBeGreaterThan(3_500);
    expect(maxAge).toBeLessThanOrEqual(3_600);
    const cookie = await cookieOf(created.token);
    expect((await docs('/api-docs', { cookie })).statusCode).toBe(200);
    const db = await t.platform.database(t.name);
    await sql`UPDATE api_docs_share SET expires_at = now() - interval '1 second' WHERE id = ${created.id}`.execute(db.executor);
    expect((await docs('/api-docs', { cookie })).statusCode).toBe(401);
    expect((await docs('/api-docs/openapi.json', { cookie })).statusCode).toBe(401);
    expect((await docs(`/api-docs?token=${created.token}`)).statusCode).toBe(401);
  });

  it('keeps the cookie to its own database: another database name refuses it', async () => {
    const created = await share();
    const cookie = await cookieOf(created.token);
    const res = await t.app.inject({ method: 'GET', url: '/api-docs/openapi.json?db=some_other_db', headers: { cookie } });
    expect([401, 404]).toContain(res.statusCode);
  });

  it('serves the vendored renderer from this server, and nothing but its fixed files', async () => {
    const bundle = await docs('/api-docs/assets/swagger-ui-bundle.js');
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/^text\/javascript/);
    expect(bundle.body.length).toBeGreaterThan(500_000);
    const init = await docs('/api-docs/assets/api-docs.js');
    expect(init.statusCode).toBe(200);
    expect(init.body).toContain('validatorUrl: null');
    for (const path of ['/api-docs/assets/package.json', '/api-docs/assets/..%2fpackage.json', '/api-docs/assets/index.html']) {
      expect((await docs(path)).statusCode, path).toBe(404);
    }
  });

  it('has no stock /docs, /redoc or /openapi.json', async () => {
    for (const path of ['/docs', '/docs/', '/redoc', '/openapi.json', '/docs/openapi.json', '/swagger.json']) {
      const res = await docs(path, { authorization: `Bearer ${t.apiKey}` });
      expect(res.statusCode, path).toBe(404);
    }
  });
});

describe('the OpenAPI document of a database with every module installed', () => {
  let doc: Record<string, any>;

  beforeAll(async () => {
    const created = await share();
    const res = await docs('/api-docs/openapi.json', { cookie: await cookieOf(created.token) });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });

  it('validates as OpenAPI 3.1 with a maintained validator, every $ref resolving', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // Every reference points at something.
    const text = JSON.stringify(doc);
    const refs = new Set([...text.matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g)].map((m) => `${m[1]}/${m[2]}`));
    for (const r of refs) {
      const [kind, name] = r.split('/') as [string, string];
      expect(doc.components[kind]?.[name], r).toBeDefined();
    }
    // Every component schema compiles as JSON Schema 2020-12 (what OpenAPI 3.1 schemas are), in
    // Ajv's strict mode: no unknown keyword, no keyword misplaced for its type.
    const ajv = schemaChecker(doc, true);
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).toBeTypeOf('function');
    }
  });

  it('has every generic route of every installed model, concretely', async () => {
    const registry = await registryOf();
    expect(registry.modules).toEqual(expect.arrayContaining(['core', 'contacts', 'project', 'sales']));
    for (const meta of registry.models.values()) {
      const m = meta.name;
      expect(doc.paths[`/api/query/${m}`]?.post, m).toBeDefined();
      expect(doc.paths[`/api/fetch/${m}/{id}`]?.post, m).toBeDefined();
      expect(doc.paths[`/api/create/${m}`]?.post, m).toBeDefined();
      expect(doc.paths[`/api/update/${m}/{id}`]?.put, m).toBeDefined();
      expect(doc.paths[`/api/delete/${m}/{id}`]?.delete, m).toBeDefined();
      expect(doc.paths[`/api/name_search/${m}`]?.post, m).toBeDefined();
      expect(doc.paths[`/api/get_registry/${m}`]?.get, m).toBeDefined();
      expect(doc.paths[`/api/model-info/${m}`]?.get, m).toBeDefined();
      expect(doc.paths[`/api/ui-effect/${m}`]?.post, m).toBeDefined();
      expect(doc.paths[`/api/bulk-create/${m}`]?.post, m).toBeDefined();
      expect(doc.paths[`/api/bulk-update/${m}`]?.put, m).toBeDefined();
      expect(doc.paths[`/api/bulk-delete/${m}`]?.delete, m).toBeDefined();
      expect(doc.paths[`/api/clone/${m}`]?.post, m).toBeDefined();
      for (const method of meta.apiMethods) expect(doc.paths[`/api/execute/${m}/${method}`]?.post, `${m}.${method}`).toBeDefined();
      for (const method of meta.wizards.keys()) expect(doc.paths[`/api/action-meta/${m}/${method}`]?.post, `${m}.${method}`).toBeDefined();
      expect(doc.components.schemas[m], m).toBeDefined();
    }
    // No path for a model that is not installed, nor for a method that is not an API method.
    expect(Object.keys(doc.paths).filter((p) => /\/api\/execute\/SaleOrder\//.test(p)).sort())
      .toEqual(['action_apply_discount', 'action_cancel', 'action_confirm', 'action_print', 'action_update_rate', 'message_follow', 'message_post', 'message_unfollow']
        .map((x) => `/api/execute/SaleOrder/${x}`));
    expect(doc.paths['/api/execute/SaleOrder/calc_name']).toBeUndefined();
    expect(doc.paths['/api/query/SaleOrder'].post.tags).toEqual(['SaleOrder']);
    expect(doc.servers).toHaveLength(1);
    expect(new URL(doc.servers[0].url).origin).toBe('http://localhost');
    expect(doc.paths['/api/api-docs-shares'].post).toBeDefined();
  });

  it('states fields, types, required, max length, choices, the selection object and the error body', () => {
    const s = doc.components.schemas;
    expect(s.SaleOrder.properties.name).toMatchObject({ type: ['string', 'null'], maxLength: 64, title: 'Reference', 'x-field-type': 'Char' });
    expect(s.SaleOrder.properties.customer).toMatchObject({ anyOf: [{ $ref: '#/components/schemas/RecordLink' }, { type: 'null' }], 'x-related-model': 'Contact' });
    expect(s.SaleOrder.properties.order_lines).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/RecordLink' } });
    expect(s.SaleOrder.properties.amount_total).toMatchObject({ type: ['number', 'null'], readOnly: true, 'x-currency-field': 'currency' });
    expect(s.SaleOrder.properties.date_order).toMatchObject({ format: 'date' });
    expect(s['SaleOrder.Create'].required).toEqual(['customer']);
    expect(s['SaleOrder.Create'].properties).not.toHaveProperty('amount_total');
    expect(s['SaleOrder.Create'].properties.order_lines.items.anyOf).toContainEqual({ $ref: '#/components/schemas/SaleOrderLine.Update' });
    expect(s['SaleOrder.Update'].required).toBeUndefined();
    expect(s['Report.Create'].required).toEqual(expect.arrayContaining(['name']));
    expect(s.Report.properties.format).toMatchObject({ enum: ['pdf', 'html', null], 'x-choices': [['pdf', 'PDF'], ['html', 'HTML']] });
    expect(s.UiView.properties.type.enum).toEqual(['List', 'Form', null]);
    expect(s['SaleOrder.action_apply_discount.Inputs']).toMatchObject({ type: 'object' });
    // Internal fields (hashes) are nowhere.
    expect(s.ApiDocsShare.properties).not.toHaveProperty('token');
    expect(s.ApiKey.properties).not.toHaveProperty('key_hash');
    expect(s.User.properties).not.toHaveProperty('password_hash');
    // The write-only password is settable (it reads as null).
    expect(s['User.Create'].properties.password).toMatchObject({ type: ['string', 'null'] });

    expect(s.SelectionObject.oneOf.map((o: { title: string }) => o.title)).toEqual(['ids', 'filter']);
    expect(s.SelectionObject.oneOf[1].properties).toHaveProperty('exclude_ids');
    expect(s.ErrorBody).toMatchObject({ required: ['detail', 'error'] });
    expect(doc.components.responses.NotFound.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    const execute = doc.paths['/api/execute/SaleOrder/action_apply_discount'].post;
    expect(execute.requestBody.content['application/json'].schema.properties.selection).toEqual({ $ref: '#/components/schemas/SelectionObject' });
    expect(execute.requestBody.content['application/json'].schema.properties.request_body.properties.inputs)
      .toEqual({ $ref: '#/components/schemas/SaleOrder.action_apply_discount.Inputs' });
    expect(execute.responses['404']).toEqual({ $ref: '#/components/responses/NotFound' });
    expect(doc.paths['/api/clone/SaleOrder'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/SelectionObject' });
  });

  it('tells the truth: real answers and bodies of the API validate against the schemas it states', async () => {
    const ajv = schemaChecker(doc);
    const check = (name: string, value: unknown) => {
      const validate = ajv.getSchema(`doc#/components/schemas/${name}`)!;
      expect(validate(value), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    };
    const contact = { name: 'Acme Validation', is_company: true };
    check('Contact.Create', contact);
    const customer = (await t.api('POST', '/api/create/Contact', contact)).json();
    check('WriteAnswer', customer);
    const product = (await t.api('POST', '/api/create/Product', { name: 'Chair', list_price: 40 })).json();
    const order = { customer: customer.id, note: 'Deliver Monday', order_lines: [{ product: product.id, quantity: 3 }] };
    check('SaleOrder.Create', order);
    const created = await t.api('POST', '/api/create/SaleOrder', order);
    expect(created.statusCode, created.body).toBe(200);
    const fetched = await t.api('POST', `/api/fetch/SaleOrder/${created.json().id}`, {});
    expect(fetched.statusCode).toBe(200);
    check('SaleOrder', fetched.json());
    for (const model of ['Contact', 'Currency', 'Report', 'User', 'ProjectTask', 'SaleOrderLine', 'Module']) {
      const rows = (await t.api('POST', `/api/query/${model}`, { limit: 5 })).json() as unknown[];
      for (const row of rows) check(model, row);
    }
    check('ModelInfo', (await t.api('GET', '/api/model-info/SaleOrder')).json());
    const registry = (await t.api('GET', '/api/get_registry/SaleOrder')).json() as Record<string, unknown>;
    for (const entry of Object.values(registry)) check('RegistryEntry', entry);
    const missing = await t.api('POST', '/api/fetch/SaleOrder/999999', {});
    check('ErrorBody', missing.json());
    check('SelectionObject', { ids: [1, 2] });
    check('SelectionObject', { filter_str: '', exclude_ids: [3] });
    // …and what the API refuses, the schema refuses too.
    const refuses = (name: string, value: unknown) => expect(ajv.getSchema(`doc#/components/schemas/${name}`)!(value), name).toBe(false);
    refuses('SelectionObject', { ids: [1], filter_str: '' });
    refuses('SelectionObject', {});
    refuses('SelectionObject', { filter: 'x' });
    refuses('SaleOrder.Create', { note: 'no customer' });
    refuses('Report.Create', { name: 'x', model: 'SaleOrder', format: 'docx' });
    refuses('SaleOrder.Create', { customer: customer.id, name: 'x'.repeat(65) });
  });
});

describe('databases that predate the reference', () => {
  it('refuses links cleanly until `--update core`, which creates the model and its rights', async () => {
    const old = await testDatabase('core');
    try {
      const db = await old.platform.database(old.name);
      await sql`DROP TABLE api_docs_share`.execute(db.executor);
      await old.run(() => ModelAccess.query({ identifier: 'core.access_api_docs_share_admin' }).delete());
      const before = await old.app.inject({ method: 'GET', url: `/api-docs?token=ffdocs_${'C'.repeat(43)}`, headers: { 'x-db-name': old.name } });
      expect(before.statusCode).toBe(401);

      await old.platform.install(old.name, { update: ['core'] });
      expect(await old.run(() => ModelAccess.query({ identifier: 'core.access_api_docs_share_admin' }).count())).toBe(1);
      const created = await old.api('POST', '/api/api-docs-shares', { name: 'after upgrade' });
      expect(created.statusCode, created.body).toBe(200);
      const res = await old.app.inject({ method: 'GET', url: `/api-docs?token=${created.json().token}`, headers: { 'x-db-name': old.name } });
      expect(res.statusCode).toBe(302);
    } finally {
      await old.close();
    }
  });
});

async function registryOf() {
  const db = await t.platform.database(t.name);
  const { readPlatformState } = await import('../../src/db/platform-state.js');
  const state = await readPlatformState(db.executor);
  return t.platform.registry(t.name, state.registryVersion);
}

/** Ajv for JSON Schema 2020-12 holding the whole document as `doc` (the OpenAPI extensions allowed). */
function schemaChecker(document: Record<string, unknown>, strict = false): Ajv2020 {
  const ajv = new Ajv2020({ strict, strictRequired: false, allowUnionTypes: true, allErrors: true });
  // The OpenAPI extensions the document uses; outside the components, the document is no schema.
  for (const keyword of ['x-field-type', 'x-related-model', 'x-currency-field', 'x-precision', 'x-visible-setting', 'x-choices',
    'openapi', 'info', 'servers', 'security', 'tags', 'x-tagGroups', 'paths', 'components']) ajv.addKeyword(keyword);
  // A CommonJS module: its default export arrives wrapped or not depending on the loader.
  const addFormats = ((formats as unknown as { default?: typeof formats }).default ?? formats);
  addFormats(ajv);
  ajv.addSchema(document, 'doc');
  return ajv;
}
