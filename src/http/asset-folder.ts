/**
 * Static files of a folder as the browser loads them (the client's `web/`, a module's `web/`, the
 * server sources shared with the browser): content types, a strong ETag and 304, no-cache for
 * files that may change and a year, immutable, for versioned ones. Only files of the types a
 * browser loads (scripts, styles, pages, images, fonts) inside the folder are served: no dotfiles,
 * no `..`, no symlink leading out, no directory listing, no type declarations or JSON; anything
 * else is `null` (a 404 for the route).
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, sep } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';

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

export const SCRIPT_TYPE = CONTENT_TYPES['.js']!;
export const REVALIDATE = 'no-cache';
export const IMMUTABLE = 'public, max-age=31536000, immutable';

export interface Asset {
  body: Buffer;
  etag: string;
  contentType: string;
  cacheControl: string;
}

/** A file of the folder by its path below it (`lib/toast.js`), or null when it is none to serve. */
export type AssetLookup = (relative: string) => Promise<Asset | null>;

/**
 * The files of `root`, read as asked and kept while their modification time and size stay the
 * same (a changed file is served at once, with a new ETag). A missing root serves nothing.
 * `only`: just these paths below the root, which may be symlinks (the build links the sources it
 * does not compile into `dist/`): the list, not the folder, bounds what is served.
 */
export function assetFolder(root: string, options: { only?: ReadonlySet<string> } = {}): AssetLookup {
  let real: string | null;
  try {
    real = realpathSync(root);
  } catch {
    real = null;
  }
  const cache = new Map<string, { mtimeMs: number; size: number; asset: Asset }>();
  return async (relative) => {
    const contentType = CONTENT_TYPES[extname(relative).toLowerCase()];
    if (real === null || !contentType || !isSafeRelativePath(relative)) return null;
    if (options.only && !options.only.has(relative)) return null;
    const candidate = `${real}${sep}${relative.split('/').join(sep)}`;
    let info;
    try {
      info = await stat(candidate);
      if (!info.isFile()) return null;
      // A symlink may point anywhere: only what really lies under the root is served.
      if (!options.only && !(await realpath(candidate)).startsWith(real + sep)) return null;
    } catch {
      return null;
    }
    const cached = cache.get(relative);
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.asset;
    const fresh = asset(await readFile(candidate), contentType, REVALIDATE);
    cache.set(relative, { mtimeMs: info.mtimeMs, size: info.size, asset: fresh });
    return fresh;
  };
}

export function asset(body: Buffer, contentType: string, cacheControl: string): Asset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, etag, contentType, cacheControl };
}

/** Plain names separated by `/`: no empty, `.`-leading (dotfiles, `..`) or backslashed segment, no NUL. */
function isSafeRelativePath(relative: string): boolean {
  if (relative.length === 0 || relative.length > 512 || /[\\\0]/.test(relative)) return false;
  return relative.split('/').every((segment) => segment.length > 0 && !segment.startsWith('.'));
}

export function sendAsset(req: FastifyRequest, reply: FastifyReply, found: Asset): FastifyReply {
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
