/**
 * `GET /web/**` at the HTTP level (src/http/routes/web-assets.ts, src/http/web-vendor.ts,
 * src/http/import-map.ts): content types, ETag and 304, `no-cache` for the client's own files and
 * a year, immutable, for the vendored ones (their version is in the URL), every file served as
 * written with each bare import resolved by the pages' import map, the formatter the server runs
 * served as the browser's, and nothing outside the folder: no dotfiles, no `..`, no symlink
 * leading out, no directory listing, unknown types 404.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandler } from '../../src/http/error-handler.js';
import { registerWebAssetRoutes } from '../../src/http/routes/web-assets.js';
import * as serverFormat from '../../src/i18n/format.js';
import * as sharedFormat from '../../src/i18n/locale-format.js';
import { pageImportMap } from '../../src/http/import-map.js';
import { SHARED_SOURCES } from '../../src/http/routes/web-assets.js';
import { loadVendorModules } from '../../src/http/web-vendor.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await testDatabase('core');
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every JavaScript file below `dir` (repository-relative paths). */
function scripts(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Where the page's import map sends a bare specifier (an exact entry, else the longest prefix entry), or null. */
function mapped(specifier: string): string | null {
  const { imports } = pageImportMap();
  if (imports[specifier]) return imports[specifier]!;
  const prefix = Object.keys(imports).filter((k) => k.endsWith('/') && specifier.startsWith(k)).sort((a, b) => b.length - a.length)[0];
  return prefix ? imports[prefix]! + specifier.slice(prefix.length) : null;
}

/** Every module specifier a file imports (static, dynamic, re-export, bare import; a JSDoc type's too). */
function specifiers(source: string): string[] {
  // No blank, `$` or brace in a specifier: `kind === 'import' ? '…'` is none.
  return [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)(["'])([^"'\s${}]+)\1/g)].map((m) => m[2]!);
}

describe('the client’s own files', () => {
  it('serves modules and styles with their types, no-cache, a strong ETag and nosniff, without any session', async () => {
    const js = await get('/web/platform.js');
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('no-cache');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    expect(js.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(js.body).toContain('window.fieldforge');

    const css = await get('/web/theme.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body).toContain('--ff-primary');

    const worker = await get('/web/workers/altcha-solver.js');
    expect(worker.headers['content-type']).toBe('text/javascript; charset=utf-8');

    // The type-checker's files are not the browser's.
    expect((await get('/web/tsconfig.json')).statusCode).toBe(404);
    expect((await get('/web/lib/fieldforge-global.d.ts')).statusCode).toBe(404);
  });

  it('answers 304 to a matching If-None-Match (strong, weak, listed or *) and 200 to a stale one', async () => {
    const first = await get('/web/lib/toast.js');
    const etag = first.headers.etag as string;
    for (const header of [etag, `W/${etag}`, `"stale", ${etag}`, '*']) {
      const again = await get('/web/lib/toast.js', { 'if-none-match': header });
      expect(again.statusCode, header).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe('no-cache');
    }
    const stale = await get('/web/lib/toast.js', { 'if-none-match': '"something-else"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.body).toBe(first.body);
  });

  it('serves every client file as written, each bare import resolved by the import map to a file served here', async () => {
    const files = [...scripts('web'), ...scripts('modules').filter((f) => f.includes('/web/'))];
    expect(files).toEqual(expect.arrayContaining(['web/platform.js', 'web/client/fields/field-widget.js', 'modules/project/web/index.js']));
    const bare = new Set<string>();
    for (const file of files) {
      const url = file.startsWith('web/') ? `/${file}` : `/web/modules/${file.slice('modules/'.length).replace('/web/', '/')}`;
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toBe(readFileSync(join(ROOT, file), 'utf8'));
      for (const specifier of specifiers(res.body)) {
        if (/^\.\.?\//.test(specifier)) continue;
        bare.add(specifier);
        expect(mapped(specifier), `${file} imports ${specifier}`).toMatch(/^\/web\//);
      }
    }
    // The vendored libraries by name, the client's own folder by prefix (modules, shared sources).
    expect([...bare]).toEqual(expect.arrayContaining(['preact', 'preact/hooks', 'htm', 'altcha-lib', 'fieldforge/web/shared/i18n/locale-format.js', 'fieldforge/web/client/registry.js']));
    for (const specifier of bare) {
      const res = await get(mapped(specifier)!);
      expect(res.statusCode, `${specifier} → ${mapped(specifier)}`).toBe(200);
    }
  });

  it('writes the import map the pages carry: the vendored URLs and the client folder, inline-safe, with its CSP hash', () => {
    const map = pageImportMap();
    const vendor = loadVendorModules();
    expect(map.imports).toEqual({ ...Object.fromEntries(vendor.urls), 'fieldforge/web/': '/web/' });
    const json = /^<script type="importmap">(.*)<\/script>$/.exec(map.tag)![1]!;
    expect(JSON.parse(json)).toEqual({ imports: map.imports });
    expect(json).not.toContain('<');
    expect(map.scriptHash).toMatch(/^'sha256-[A-Za-z0-9+/]{43}='$/);
  });
});

describe('the server sources the browser runs', () => {
  it('serves the formatter and what it imports from the server’s own files, byte for byte, and nothing else of src/', async () => {
    expect(SHARED_SOURCES).toEqual(['i18n/locale-format.js', 'orm/round-to-step.js']);
    for (const path of SHARED_SOURCES) {
      const res = await get(`/web/shared/${path}`);
      expect(res.statusCode, path).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toBe(readFileSync(join(ROOT, 'src', path), 'utf8'));
      // Its imports are other shared sources, at the same relative place.
      for (const specifier of specifiers(res.body)) {
        expect(SHARED_SOURCES, `${path} imports ${specifier}`).toContain(new URL(specifier, `http://x/${path}`).pathname.slice(1));
      }
    }
    for (const url of ['/web/shared/i18n/format.ts', '/web/shared/i18n/format.js', '/web/shared/errors.js', '/web/shared/index.ts', '/web/shared/../src/errors.ts', '/web/shared/']) {
      expect((await get(url)).statusCode, url).toBe(404);
    }
  });

  it('is the very module the server formats with, and the client keeps no copy of it', () => {
    for (const name of ['formatDate', 'formatDatetime', 'formatTime', 'formatNumber', 'formatMonetary', 'deriveFormats', 'stripIsolate'] as const) {
      expect(serverFormat[name], name).toBe(sharedFormat[name]);
    }
    const client = readFileSync(join(ROOT, 'web/client/format.js'), 'utf8');
    expect(client).toContain(`from 'fieldforge/web/shared/i18n/locale-format.js'`);
    // The pattern tokens, the rounding and the digit tables are written once, in src/.
    for (const file of scripts('web')) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(text, file).not.toContain('YYYY|YY|MM');
      expect(text, file).not.toMatch(/function (roundToStep|localDigits|dayPeriod|minusSign)\b/);
    }
  });
});

describe('vendored libraries', () => {
  it('serves Preact, its hooks, htm and altcha-lib’s browser modules as published under versioned URLs, immutable for a year', async () => {
    const vendor = loadVendorModules();
    expect([...vendor.urls.keys()].sort()).toEqual(['altcha-lib', 'altcha-lib/algorithms/web/pbkdf2', 'altcha-lib/workers/shared', 'htm', 'preact', 'preact/hooks']);
    for (const [path] of vendor.files) {
      expect(path).toMatch(/^vendor\/(preact|htm|altcha-lib)@\d+\.\d+\.\d+\//);
      const res = await get(`/web/${path}`);
      expect(res.statusCode, path).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.body).not.toMatch(/sourceMappingURL/);
      // Every import resolves to a file served here: bare ones by the import map, relative ones vendored alongside.
      for (const specifier of specifiers(res.body)) {
        const target = /^\.\.?\//.test(specifier) ? new URL(specifier, `http://x/web/${path}`).pathname : mapped(specifier);
        expect(target, `${path} imports ${specifier}`).toMatch(/^\/web\/vendor\//);
        expect(vendor.files.has((target ?? "").slice('/web/'.length)), `${path} imports ${specifier}`).toBe(true);
      }
      const cached = await get(`/web/${path}`, { 'if-none-match': res.headers.etag as string });
      expect(cached.statusCode).toBe(304);
    }
    const hooks = (await get(vendor.urls.get('preact/hooks')!)).body;
    expect(specifiers(hooks)).toEqual(['preact']);
    // The server-only parts of altcha-lib (node:crypto) are not vendored.
    expect([...vendor.files.keys()].some((p) => /altcha-lib@[^/]+\/v2\/algorithms\/pbkdf2\.js$/.test(p))).toBe(false);
  });

  it('answers 404 for another version, an unknown vendored file, or a path that leaves the vendor folder', async () => {
    const preact = loadVendorModules().urls.get('preact')!;
    for (const url of [
      preact.replace(/@[\d.]+\//, '@0.0.1/'),
      '/web/vendor/preact@11.2.0/package.json',
      '/web/vendor/altcha-lib@2.8.0/v2/algorithms/pbkdf2.js',
      '/web/vendor/',
    ]) {
      expect((await get(url)).statusCode, url).toBe(404);
    }
  });
});

/** A GET over a real socket with the path exactly as written (inject and browsers would resolve `..` first). */
function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('what is never served', () => {
  let port: number;
  let root: string;
  let outside: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ff-web-root-'));
    outside = await mkdtemp(join(tmpdir(), 'ff-web-outside-'));
    await mkdir(join(root, 'lib'));
    await mkdir(join(root, '.git'));
    await writeFile(join(root, 'app.js'), `import { h } from 'preact';\nexport const x = h;\n`);
    await writeFile(join(root, 'lib', 'page.html'), '<!doctype html><title>x</title>');
    await writeFile(join(root, '.env.js'), 'TOP-SECRET-CONTENT');
    await writeFile(join(root, '.git', 'config.js'), 'TOP-SECRET-CONTENT');
    await writeFile(join(root, 'notes.txt'), 'plain text is not a client file type');
    await writeFile(join(root, 'tool.ts'), 'export {}');
    await writeFile(join(outside, 'secret.js'), 'TOP-SECRET-CONTENT');
    await symlink(join(outside, 'secret.js'), join(root, 'leak.js'));
    await symlink(outside, join(root, 'linked'));
    await symlink(join(root, 'app.js'), join(root, 'alias.js'));
    app = Fastify();
    installErrorHandler(app, false);
    registerWebAssetRoutes(app, { root });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await app?.close();
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('refuses dotfiles, dot folders, .., encoded .., backslashes, NUL, directories, unknown types and symlinks leading out', async () => {
    const ok = await app.inject({ method: 'GET', url: '/web/app.js' });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe(`import { h } from 'preact';\nexport const x = h;\n`);
    expect((await app.inject({ method: 'GET', url: '/web/lib/page.html' })).headers['content-type']).toBe('text/html; charset=utf-8');
    // A symlink to a file inside the folder is that file.
    expect((await app.inject({ method: 'GET', url: '/web/alias.js' })).body).toBe(ok.body);
    for (const url of [
      '/web/.env.js',
      '/web/.git/config.js',
      '/web/lib/../app.js',
      '/web/vendor/../app.js',
      '/web/lib/%2e%2e/app.js',
      '/web/%2e%2e/%2e%2e/etc/passwd',
      '/web/lib%2f..%2fapp.js',
      '/web/lib\\..\\app.js',
      '/web/app.js%00.css',
      '/web/lib',
      '/web/lib/',
      '/web/',
      '/web/notes.txt',
      '/web/tool.ts',
      '/web/leak.js',
      '/web/linked/secret.js',
      '/web/missing.js',
      '/web//app.js',
    ]) {
      const res = await rawGet(port, url);
      expect(res.status, url).toBe(404);
      expect(res.body, url).not.toContain('TOP-SECRET-CONTENT');
    }
  });

  it('serves a changed file at once, with a new ETag', async () => {
    const before = await app.inject({ method: 'GET', url: '/web/app.js' });
    await writeFile(join(root, 'app.js'), `export const changed = 1;\n`);
    const later = new Date(Date.now() + 5_000);
    await utimes(join(root, 'app.js'), later, later);
    const after = await app.inject({ method: 'GET', url: '/web/app.js', headers: { 'if-none-match': before.headers.etag as string } });
    expect(after.statusCode).toBe(200);
    expect(after.body).toBe('export const changed = 1;\n');
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });
});
