/**
 * Answering with a rendered document instead of JSON (a report): its media type, a download
 * `Content-Disposition` (RFC 6266: the name as a quoted `filename`, plus `filename*` in UTF-8,
 * RFC 8187, when the name is not plain ASCII — an ASCII fallback stands in `filename` for old
 * clients), and for HTML a sandboxing Content-Security-Policy: a report opened from the API's
 * origin runs no script and loads nothing, whatever its data holds.
 */
import type { FastifyReply } from 'fastify';
import type { RenderedDocument } from '../api/generate-report.js';

/** What an HTML document may do when opened: show itself, with inline styles and `data:` images and fonts. */
const HTML_POLICY = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:";

/** `attachment; filename="…"`, with `filename*=UTF-8''…` when the name needs more than printable ASCII. */
export function attachmentDisposition(filename: string): string {
  const plain = /^[\x20-\x7e]*$/.test(filename) && !/["\\%]/.test(filename);
  if (plain) return `attachment; filename="${filename}"`;
  const fallback = filename.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]|["\\%]/g, '_');
  // RFC 8187 attr-chars: encodeURIComponent leaves ' ( ) * ! unescaped, which are not all allowed there.
  const encoded = encodeURIComponent(filename).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

export function sendDocument(reply: FastifyReply, document: RenderedDocument): FastifyReply {
  void reply
    .header('Content-Type', document.contentType)
    .header('Content-Disposition', attachmentDisposition(document.filename))
    .header('X-Content-Type-Options', 'nosniff');
  if (document.contentType.startsWith('text/html')) void reply.header('Content-Security-Policy', HTML_POLICY);
  return reply.send(document.body);
}
