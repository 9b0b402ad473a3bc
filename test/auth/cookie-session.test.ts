/**
 * Sessions for the browser (credentials issue item 9): with `cookie: true` the session rides in
 * an HttpOnly, SameSite cookie; a cookie-authenticated request that is not a plain read needs the
 * CSRF token in `X-CSRF-Token`; Bearer requests need none; refresh and logout work on cookies.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/http/app.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { solvedAltcha } from '../support/altcha.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let app: FastifyInstance;
const EMAIL = 'cookie@example.test';
const PASSWORD = 'lantern-biscuit-harbour-9';

beforeAll(async () => {
  t = await testDatabase('full');
  app = await buildApp(t.platform, { dev: false, altchaMaxNumber: 10 });
  await t.run(async () => {
    const groups = await Group.query("Q(identifier__in=['core.group_user', 'contacts.group_contacts_user'])").ids();
    await User.create({ name: 'Cookie user', email: EMAIL, password: PASSWORD, groups });
  });
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

type Jar = Record<string, string>;

/** Cookies set by a response, by name, with their attributes as sent. */
function setCookies(res: LightMyRequestResponse): Map<string, string> {
  const raw = res.headers['set-cookie'];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return new Map(list.map((c) => [c.slice(0, c.indexOf('=')), c]));
}

function jarFrom(res: LightMyRequestResponse, jar: Jar = {}): Jar {
  for (const [name, header] of setCookies(res)) {
    const value = header.slice(name.length + 1, header.indexOf(';'));
    if (value) jar[name] = value;
    else delete jar[name];
  }
  return jar;
}

function request(method: 'GET' | 'POST', url: string, jar: Jar, body?: unknown, headers: Record<string, string> = {}) {
  const cookie = Object.entries(jar).map(([k, v]) => `${k}=${v}`).join('; ');
  return app.inject({
    method, url,
    headers: { 'x-db-name': t.name, ...(cookie ? { cookie } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

async function signInWithCookies() {
  const res = await request('POST', '/auth/authenticate', {}, { email: EMAIL, password: PASSWORD, altcha: await solvedAltcha(app, t.name), cookie: true });
  expect(res.statusCode, res.body).toBe(200);
  return { res, jar: jarFrom(res), csrf: res.json().csrf_token as string };
}

describe('cookie sessions', () => {
  it('sets the session HttpOnly and SameSite, the refresh token scoped to /auth, and a readable CSRF token', async () => {
    const { res, jar, csrf } = await signInWithCookies();
    const cookies = setCookies(res);
    expect(cookies.get('ff_session')).toMatch(/HttpOnly/);
    expect(cookies.get('ff_session')).toMatch(/SameSite=Lax/);
    expect(cookies.get('ff_session')).toMatch(/Path=\//);
    expect(cookies.get('ff_refresh')).toMatch(/HttpOnly/);
    expect(cookies.get('ff_refresh')).toMatch(/SameSite=Strict/);
    expect(cookies.get('ff_refresh')).toMatch(/Path=\/auth/);
    expect(cookies.get('ff_csrf')).not.toMatch(/HttpOnly/);
    expect(jar.ff_session).toBe(res.json().access_token);
    expect(jar.ff_csrf).toBe(csrf);
    // Without `cookie: true` no cookie is set (Bearer stays the API's way).
    const plain = await request('POST', '/auth/authenticate', {}, { email: EMAIL, password: PASSWORD, altcha: await solvedAltcha(app, t.name) });
    expect(plain.headers['set-cookie']).toBeUndefined();
    expect(plain.json().csrf_token).toBeUndefined();
  });

  it('a cookie-authenticated write needs the CSRF token of its own session', async () => {
    const { jar, csrf } = await signInWithCookies();
    const other = await signInWithCookies();
    const create = (headers: Record<string, string>) => request('POST', '/api/create/Contact', jar, { name: 'Via cookie' }, headers);
    for (const headers of [{}, { 'x-csrf-token': 'forged' }, { 'x-csrf-token': other.csrf }] as Record<string, string>[]) {
      const res = await create(headers);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ detail: expect.stringMatching(/CSRF/), error: 'AccessError' });
    }
    expect(await t.run(() => Contact.query("Q(name='Via cookie')").count())).toBe(0);
    const ok = await create({ 'x-csrf-token': csrf });
    expect(ok.statusCode, ok.body).toBe(200);
    // A plain read (GET) needs no token; the API's POST reads do.
    expect((await request('GET', '/api/get_registry/Contact', jar)).statusCode).toBe(200);
    expect((await request('POST', '/api/query/Contact', jar, {})).statusCode).toBe(403);
    expect((await request('POST', '/api/query/Contact', jar, {}, { 'x-csrf-token': csrf })).statusCode).toBe(200);
  });

  it('Bearer requests need no CSRF token, and an Authorization header wins over cookies', async () => {
    const { jar } = await signInWithCookies();
    const bearer = { authorization: `Bearer ${jar.ff_session}` };
    expect((await request('POST', '/api/query/Contact', {}, {}, bearer)).statusCode).toBe(200);
    // A broken header is not rescued by a valid cookie.
    expect((await request('POST', '/api/query/Contact', jar, {}, { authorization: 'Bearer nonsense' })).statusCode).toBe(401);
    // An API key in a cookie is not a session.
    expect((await request('GET', '/api/get_registry/Contact', { ff_session: t.apiKey })).statusCode).toBe(401);
  });

  it('refresh and logout work on the cookies', async () => {
    const { jar } = await signInWithCookies();
    const refreshed = await request('POST', '/auth/refresh', { ff_refresh: jar.ff_refresh! }, {});
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    const next = jarFrom(refreshed, { ...jar });
    expect(next.ff_session).not.toBe(jar.ff_session);
    expect(next.ff_refresh).not.toBe(jar.ff_refresh);
    expect(refreshed.json().csrf_token).toBe(next.ff_csrf);
    expect((await request('GET', '/api/get_registry/Contact', next)).statusCode).toBe(200);
    // Logout needs the CSRF token too (it is a POST), and clears the cookies.
    expect((await request('POST', '/auth/logout', next, {})).statusCode).toBe(403);
    const out = await request('POST', '/auth/logout', next, {}, { 'x-csrf-token': next.ff_csrf! });
    expect(out.statusCode, out.body).toBe(200);
    const cleared = jarFrom(out, { ...next });
    expect(cleared.ff_session).toBeUndefined();
    expect((await request('GET', '/api/get_registry/Contact', next)).statusCode).toBe(401);
  });
});
