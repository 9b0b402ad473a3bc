/**
 * What a served file is sent with, the same whether the server streams it or a bucket answers a
 * presigned URL: a safe Content-Type, an inline/attachment Content-Disposition whose filename
 * cannot break the header or smuggle a path, and the caching policy.
 */
import type { FileAction } from './signed-url.js';

const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** The stored mimetype when it is a well-formed media type, else a neutral binary type. */
export function contentType(mimetype: string | null): string {
  const m = (mimetype ?? '').trim().toLowerCase();
  if (!MEDIA_TYPE.test(m)) return 'application/octet-stream';
  return m.startsWith('text/') ? `${m}; charset=utf-8` : m;
}

/**
 * `inline` (view) or `attachment` (download), with an ASCII fallback filename (quotes, slashes,
 * control characters replaced) and the exact name in RFC 5987 `filename*`.
 */
export function contentDisposition(action: FileAction, name: string | null): string {
  const base = (name ?? '').split(/[/\\]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, '').trim() || 'file';
  const ascii = base.normalize('NFKD').replace(/[^\x20-\x7e]/g, '_').replace(/["\\%;]/g, '_');
  const encoded = encodeURIComponent(base).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${action === 'download' ? 'attachment' : 'inline'}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Public files may be cached by shared caches; the others only by the browser that fetched them. */
export function cacheControl(isPublic: boolean): string {
  return isPublic ? 'public, max-age=86400' : 'private, max-age=3600';
}

export type ByteRange = { start: number; end: number };

/**
 * The single byte range a `Range` header asks for within `size` bytes: null when there is none
 * (or it is not a single bytes range: the whole file is sent), 'unsatisfiable' for a 416.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
