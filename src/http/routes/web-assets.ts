/**
 * The browser client's files (spec §4.11, CONTRACTS C2): `GET /web/<path>` serves the top-level
 * `web/` folder (platform script, components, theme) and `GET /web/vendor/<package>@<version>/…`
 * the vendored npm libraries (`web-vendor.ts`). Own files are revalidated on every use (`no-cache`
 * plus a strong ETag, so an unchanged file costs a 304); vendored files carry their version in
 * the URL and are cached for a year. Only files of the types a browser loads (scripts, styles,
 * pages, images, fonts) inside `web/` are served: no dotfiles, no `..`, no symlink leading out, no
 * directory listing, no type declarations or JSON (`web/tsconfig.json` is the type-checker's);
 * anything else is a 404.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFound } from '../../errors.js';
import { loadVendorModules, rewriteBareImports } from '../web-vendor.js';

/** The client's folder at the repository's top level. */
export const WEB_ROOT = fileURLToPath(new URL('../../../web', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.webmanifest': 'application/manifest+json',
};

/** The platform's icon under `web/`, and its address (the pages link it). */
const FAVICON_FILE = 'icons/fieldforge.svg';
export const FAVICON_URL = `/web/${FAVICON_FILE}`;

const REVALIDATE = 'no-cache';
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Asset {
  body: Buffer;
  etag: string;
  contentType: string;
  cacheControl: string;
}

export interface WebAssetOptions {
  /** Folder to serve instead of `web/` (tests). */
  root?: string;
}

export function registerWebAssetRoutes(app: FastifyInstance, options: WebAssetOptions = {}): void {
  const root = realpathSync(options.root ?? WEB_ROOT);
  const vendor = loadVendorModules();
  const vendorAssets = new Map<string, Asset>();
  for (const [path, file] of vendor.files) vendorAssets.set(path, asset(file.body, CONTENT_TYPES['.mjs']!, IMMUTABLE));
  /** Own files by path, kept while their modification time and size stay the same. */
  const cache = new Map<string, { mtimeMs: number; size: number; asset: Asset }>();

  async function ownFile(relative: string): Promise<Asset | null> {
    const contentType = CONTENT_TYPES[extname(relative).toLowerCase()];
    if (!contentType || !isSafeRelativePath(relative)) return null;
    const candidate = `${root}${sep}${relative.split('/').join(sep)}`;
    let info;
    try {
      info = await stat(candidate);
      if (!info.isFile()) return null;
      // A symlink may point anywhere: only what really lies under the root is served.
      if (!(await realpath(candidate)).startsWith(root + sep)) return null;
    } catch {
      return null;
    }
    const cached = cache.get(relative);
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.asset;
    let body = await readFile(candidate);
    if (contentType.startsWith('text/javascript')) body = Buffer.from(rewriteBareImports(body.toString('utf8'), vendor.urls), 'utf8');
    const fresh = asset(body, contentType, REVALIDATE);
    cache.set(relative, { mtimeMs: info.mtimeMs, size: info.size, asset: fresh });
    return fresh;
  }

  // Browsers ask for `/favicon.ico` on any page that names no icon (a JSON answer, a report):
  // the platform's own icon, not a 404. The pages name it (`web-pages.ts`).
  app.get('/favicon.ico', async (req, reply) => {
    const found = await ownFile(FAVICON_FILE);
    if (!found) throw new NotFound('No icon');
    return sendAsset(req, reply, found);
  });

  app.get('/web/*', async (req: FastifyRequest<{ Params: { '*': string } }>, reply) => {
    const relative = req.params['*'];
    const found = vendorAssets.get(relative) ?? (relative.startsWith('vendor/') ? null : await ownFile(relative));
    if (!found) throw new NotFound(`No file /web/${relative}`);
    return sendAsset(req, reply, found);
  });
}

function asset(body: Buffer, contentType: string, cacheControl: string): Asset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, etag, contentType, cacheControl };
}

/** Plain names separated by `/`: no empty, `.`-leading (dotfiles, `..`) or backslashed segment, no NUL. */
function isSafeRelativePath(relative: string): boolean {
  if (relative.length === 0 || relative.length > 512 || /[\\\0]/.test(relative)) return false;
  return relative.split('/').every((segment) => segment.length > 0 && !segment.startsWith('.'));
}

function sendAsset(req: FastifyRequest, reply: FastifyReply, found: Asset): FastifyReply {
  void reply
    .header('ETag', found.etag)
    .header('Cache-Control', found.cacheControl)
    .header('X-Content-Type-Options', 'nosniff');
  if (matchesEtag(req.headers['if-none-match'], found.etag)) return reply.status(304).send();
  return reply.header('Content-Type', found.contentType).send(found.body);
}

/** RFC 9110 §13.1.2: weak comparison against each listed tag, or `*`. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}
