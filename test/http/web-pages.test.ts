/**
 * The web client's pages and the server facts its shell needs (CONTRACTS C2): `/` sends a browser
 * to the shell or the sign-in page; both pages are small static documents under a strict
 * Content-Security-Policy; the database of a page is the header's, the host's, `?db=`'s (then
 * remembered in `ff_db`), the cookie's or the only one; `GET /auth/me`, `GET /api/menus` (only the
 * menus whose model the caller may read, in sequence order, in the caller's language) and
 * `GET /api/window-action/{ref}`.
 */
import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Language } from '../../modules/core/models/language.js';
import { pageImportMap } from '../../src/http/import-map.js';
import { solvedAltcha } from '../support/altcha.js';
import { createUserWithPassword } from '../support/browser.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let other: TestDatabase;
const PASSWORD = 'quiet-harbour-lantern-42';

beforeAll(async () => {
  // Two databases on one server: nothing but the header, the address or the cookie tells them apart.
  [t, other] = await Promise.all([testDatabase('full'), testDatabase('core')]);
  await createUserWithPassword(t, { name: 'Inès Internal', email: 'internal@example.test', password: PASSWORD, groups: ['core.group_user'] });
  await createUserWithPassword(t, { name: 'Carl Contacts', email: 'contacts@example.test', password: PASSWORD, groups: ['contacts.group_contacts_user'] });
});
afterAll(async () => {
  await t?.close();
  await other?.close();
});

function get(url: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url, headers });
}

/** The `Set-Cookie` header of `name`, as sent. */
function setCookie(res: LightMyRequestResponse, name: string): string | undefined {
  const raw = res.headers['set-cookie'];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.find((c) => c.startsWith(`${name}=`));
}

/** The JSON the page hands its entry module (`#app[data-page]`). */
function pageData(body: string): Record<string, unknown> {
  const m = /<div id="app" data-page="([^"]*)"><\/div>/.exec(body);
  if (!m) throw new Error(`no #app in ${body}`);
  return JSON.parse(m[1]!.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
}

/** Session cookies of a password sign-in, as a `Cookie` header. */
async function signIn(email: string): Promise<string> {
  const altcha = await solvedAltcha(t.app, t.name);
  const res = await t.app.inject({
    method: 'POST', url: '/auth/authenticate',
    headers: { 'content-type': 'application/json', 'x-db-name': t.name },
    payload: JSON.stringify({ email, password: PASSWORD, altcha, cookie: true }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
}

describe('GET /', () => {
  it('sends a browser without a session to the sign-in page, one with a session cookie to the shell, keeping ?db=', async () => {
    const out = await get('/');
    expect(out.statusCode).toBe(302);
    expect(out.headers.location).toBe('/web/login');
    const inside = await get('/', { cookie: 'ff_session=anything' });
    expect(inside.statusCode).toBe(302);
    expect(inside.headers.location).toBe('/web');
    expect((await get(`/?db=${t.name}`)).headers.location).toBe(`/web/login?db=${t.name}`);
    expect(out.headers['cache-control']).toBe('no-store');
  });
});

describe('the pages', () => {
  it('serve a small static document: stylesheets, the import map, the platform script, the entry module, a noscript message, <html lang>', async () => {
    for (const [url, entry, title] of [['/web/login', '/web/client/login.js', 'Sign in · FieldForge'], ['/web', '/web/client/app.js', 'FieldForge']] as const) {
      const res = await get(url, { 'x-db-name': t.name });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const body = res.body;
      expect(body).toMatch(/^<!doctype html>\n<html lang="en" dir="ltr">/);
      expect(body).toContain(`<title>${title}</title>`);
      for (const css of ['/web/theme.css', '/web/client/app.css', '/web/client/views/views.css', '/web/client/fields/fields.css', '/web/client/settings/settings.css']) {
        expect(body).toContain(`<link rel="stylesheet" href="${css}">`);
      }
      // The import map before any module script: it resolves their bare imports.
      expect(body).toContain(`${pageImportMap().tag}\n  <script type="module" src="/web/platform.js"></script>\n  <script type="module" src="${entry}"></script>`);
      expect(body).toMatch(/<noscript><p class="ff-noscript">FieldForge needs JavaScript[^<]*<\/p><\/noscript>/);
      // No inline script but the import map, no inline style: the CSP forbids them.
      expect(body.match(/<script\b[^>]*>/g)!.filter((tag) => !/ src="/.test(tag))).toEqual(['<script type="importmap">']);
      expect(body).not.toMatch(/<style\b| style="/);
    }
  });

  it('carry a strict CSP, no framing, no caching, no referrer to other sites', async () => {
    for (const url of ['/web/login', '/web']) {
      const res = await get(url, { 'x-db-name': t.name });
      const csp = String(res.headers['content-security-policy']);
      const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k!, v.join(' ')]));
      expect(directives.get('default-src')).toBe("'self'");
      // This origin, and of inline scripts the import map alone, by its hash.
      const json = /<script type="importmap">(.*?)<\/script>/.exec(res.body)![1]!;
      expect(directives.get('script-src')).toBe(`'self' 'sha256-${createHash('sha256').update(json).digest('base64')}'`);
      expect(directives.get('script-src')).toBe(`'self' ${pageImportMap().scriptHash}`);
      expect(directives.get('style-src')).toBe("'self'");
      expect(directives.get('connect-src')).toBe("'self'");
      expect(directives.get('frame-ancestors')).toBe("'none'");
      expect(directives.get('object-src')).toBe("'none'");
      expect(directives.get('base-uri')).toBe("'none'");
      expect(csp).not.toContain('unsafe');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('same-origin');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });
});

describe('the database of a web page', () => {
  it('with several databases and no choice: the sign-in page lists them, the shell sends the browser there', async () => {
    const login = await get('/web/login', { host: 'nothing.example.com' });
    expect(login.statusCode).toBe(200);
    const data = pageData(login.body);
    expect(data.db).toBeNull();
    expect(data.databases).toEqual(expect.arrayContaining([t.name, other.name]));
    const shell = await get('/web', { host: 'nothing.example.com' });
    expect(shell.statusCode).toBe(302);
    expect(shell.headers.location).toBe('/web/login?next=%2Fweb');
  });

  it('?db= chooses one and is remembered in an HttpOnly ff_db cookie, which then selects the database of every request', async () => {
    const chosen = await get(`/web/login?db=${other.name}`, { host: 'nothing.example.com' });
    expect(pageData(chosen.body)).toMatchObject({ db: other.name, db_source: 'query' });
    const cookie = setCookie(chosen, 'ff_db')!;
    expect(cookie).toMatch(new RegExp(`^ff_db=${other.name}; Max-Age=31536000; Path=/; HttpOnly; SameSite=Lax$`));
    const jar = { host: 'nothing.example.com', cookie: `ff_db=${other.name}` };
    expect(pageData((await get('/web/login', jar)).body)).toMatchObject({ db: other.name, db_source: 'cookie' });
    expect((await get('/web', jar)).statusCode).toBe(200);
    // The API and the sign-in routes follow the cookie: a challenge is issued for that database.
    const challenge = await get('/altcha/challenge', jar);
    expect(challenge.statusCode, challenge.body).toBe(200);
    const noChoice = await get('/altcha/challenge', { host: 'nothing.example.com' });
    expect(noChoice.statusCode).toBe(400);
    expect(noChoice.json().detail).toBe('Several databases exist: choose one with the X-DB-NAME header');
  });

  it('?db= wins over the cookie, the host and the header over both; a cookie naming no database is ignored', async () => {
    const jar = { host: 'nothing.example.com', cookie: `ff_db=${other.name}` };
    const switched = await get(`/web/login?db=${t.name}`, jar);
    expect(pageData(switched.body)).toMatchObject({ db: t.name, db_source: 'query' });
    expect(setCookie(switched, 'ff_db')).toMatch(new RegExp(`^ff_db=${t.name};`));
    const byHost = await get(`/web/login?db=${other.name}`, { host: `${t.name}.example.com`, cookie: `ff_db=${other.name}` });
    expect(pageData(byHost.body)).toMatchObject({ db: t.name, db_source: 'host' });
    expect(setCookie(byHost, 'ff_db')).toBeUndefined();
    const byHeader = await get(`/web/login?db=${other.name}`, { 'x-db-name': t.name, cookie: `ff_db=${other.name}` });
    expect(pageData(byHeader.body)).toMatchObject({ db: t.name, db_source: 'header' });
    const stale = await get('/web/login', { host: 'nothing.example.com', cookie: 'ff_db=fft_dropped_long_ago' });
    expect(pageData(stale.body)).toMatchObject({ db: null });
  });

  it('an unknown ?db= is said on the sign-in page; an empty one forgets the remembered choice', async () => {
    const unknown = await get('/web/login?db=fft_no_such_db', { host: 'nothing.example.com' });
    expect(pageData(unknown.body)).toMatchObject({ db: null, refused: 'fft_no_such_db' });
    expect(setCookie(unknown, 'ff_db')).toBeUndefined();
    const shell = await get('/web?db=fft_no_such_db', { host: 'nothing.example.com' });
    expect(shell.headers.location).toBe('/web/login?next=%2Fweb&db=fft_no_such_db');
    const forget = await get('/web/login?db=', { host: 'nothing.example.com', cookie: `ff_db=${t.name}` });
    expect(pageData(forget.body)).toMatchObject({ db: null });
    expect(setCookie(forget, 'ff_db')).toMatch(/^ff_db=; Max-Age=0;|^ff_db=; Expires=Thu, 01 Jan 1970/);
  });
});

describe('GET /auth/me', () => {
  it('answers the signed-in person (session cookie) with groups, company and language; 401 when signed out', async () => {
    const cookie = await signIn('internal@example.test');
    const res = await get('/auth/me', { 'x-db-name': t.name, cookie });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      id: expect.any(Number), name: 'Inès Internal', email: 'internal@example.test', lang: null, is_admin: false,
      groups: ['core.group_user'], company: null, totp_enabled: false,
      language: { code: 'en', direction: 'ltr' }, db: t.name,
    });
    const out = await get('/auth/me', { 'x-db-name': t.name });
    expect(out.statusCode).toBe(401);
  });

  it('gives the user language and its direction (an active language), Accept-Language when the user has none', async () => {
    const ids = await t.run(async () => Language.query('Q(code__in=["fr", "ar"])').with_archived().ids());
    for (const id of ids) expect((await t.api('PUT', `/api/update/Language/${id}`, { active: true })).statusCode).toBe(200);
    // Administrators: the Settings menus are theirs (WindowAction.groups), and they are what is translated here.
    await createUserWithPassword(t, { name: 'Amal', email: 'amal@example.test', password: PASSWORD, groups: ['core.group_user', 'core.group_admin'], lang: 'ar' });
    await createUserWithPassword(t, { name: 'Fabien', email: 'fabien@example.test', password: PASSWORD, groups: ['core.group_user', 'core.group_admin'] });
    const cookie = await signIn('amal@example.test');
    expect((await get('/auth/me', { 'x-db-name': t.name, cookie, 'accept-language': 'fr' })).json()).toMatchObject({ lang: 'ar', language: { code: 'ar', direction: 'rtl' } });
    const internal = await signIn('internal@example.test');
    expect((await get('/auth/me', { 'x-db-name': t.name, cookie: internal, 'accept-language': 'fr-CH, en;q=0.5' })).json())
      .toMatchObject({ lang: null, language: { code: 'fr', direction: 'ltr' } });
    // Menus follow the same language.
    const menus = (await get('/api/menus', { 'x-db-name': t.name, cookie })).json() as { name: string }[];
    expect(menus.map((m) => m.name)).toContain('الإعدادات');
    const fabien = await signIn('fabien@example.test');
    const french = (await get('/api/menus', { 'x-db-name': t.name, cookie: fabien, 'accept-language': 'fr' })).json() as { name: string; children: { name: string }[] }[];
    const settings = french.find((m) => m.name === 'Paramètres') as { name: string; children: { name: string; children?: { name: string }[] }[] } | undefined;
    expect(settings?.children.map((c) => c.name)).toEqual(expect.arrayContaining(['Général', 'Utilisateurs', 'Sociétés', 'Modules']));
    expect(settings?.children.find((c) => c.name === 'Général')?.children?.map((c) => c.name)).toEqual(["Clés d'API", "Référence de l'API"]);
  });
});

describe('GET /api/menus', () => {
  type Menu = { name: string; action: string | null; children: Menu[] };
  const names = (menus: Menu[]): unknown[] => menus.map((m) => (m.children.length ? { [m.name]: names(m.children) } : m.name));

  it('gives the administrator every menu in sequence order, each with the action it opens', async () => {
    const res = await t.api('GET', '/api/menus');
    expect(res.statusCode, res.body).toBe(200);
    const menus = res.json() as Menu[];
    expect(names(menus)).toEqual([
      { Contacts: ['Contacts', { Configuration: ['Tags'] }] },
      { Project: ['Tasks', 'Projects', { Configuration: ['Stages', 'Tags'] }] },
      { Settings: expect.arrayContaining(['Users', 'Companies', 'Modules']) },
    ]);
    expect(menus[0]!.action).toBeNull();
    expect(menus[0]!.children[0]!.action).toBe('contacts.action_contacts');
  });

  it('gives a restricted user only the menus whose model it may read, and the parents leading to them', async () => {
    const internal = (await get('/api/menus', { 'x-db-name': t.name, cookie: await signIn('internal@example.test') })).json() as Menu[];
    // core.group_user reads User, Company and Module, but no contact and no project; the Settings
    // actions are the administrators' (WindowAction.groups).
    expect(internal.map((m) => m.name)).toEqual([]);
    const contacts = (await get('/api/menus', { 'x-db-name': t.name, cookie: await signIn('contacts@example.test') })).json() as Menu[];
    expect(names(contacts)).toEqual([{ Contacts: ['Contacts', { Configuration: ['Tags'] }] }]);
  });
});

describe('GET /api/window-action/{ref}', () => {
  it('answers the action with its views\' arches, by identifier or id; 403 without the read right on its model, 404 when unknown', async () => {
    const res = await t.api('GET', '/api/window-action/contacts.action_contacts');
    expect(res.statusCode, res.body).toBe(200);
    const action = res.json();
    expect(action).toMatchObject({ identifier: 'contacts.action_contacts', name: 'Contacts', model: 'Contact', modes: ['List', 'Form'], default_view: 'List' });
    expect(action.views.List).toEqual(expect.arrayContaining([{ field: { name: 'name' } }]));
    expect(Array.isArray(action.views.Form)).toBe(true);
    expect((await t.api('GET', `/api/window-action/${action.id}`)).json().identifier).toBe('contacts.action_contacts');
    // An action linking no Form view takes the model's own when there is one, else none.
    const tags = (await t.api('GET', '/api/window-action/contacts.action_contact_tags')).json();
    expect(tags.views.List).toBeDefined();
    expect(tags.views.Form).toBeUndefined();

    const internal = await signIn('internal@example.test');
    const refused = await get('/api/window-action/contacts.action_contacts', { 'x-db-name': t.name, cookie: internal });
    expect(refused.statusCode).toBe(403);
    // The user may read User records, but the Users action is the administrators' (its groups).
    const users = await get('/api/window-action/core.action_users', { 'x-db-name': t.name, cookie: internal });
    expect(users.statusCode).toBe(403);
    expect(users.json()).toMatchObject({ error: 'AccessError' });
    expect((await t.api('GET', '/api/window-action/core.action_users')).statusCode).toBe(200);
    expect((await t.api('GET', '/api/window-action/nothing.here')).statusCode).toBe(404);
  });
});
