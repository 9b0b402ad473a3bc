/**
 * File routes (spec §4.7, §5): `GET /api/files/{id}/url` hands out a signed, expiring URL;
 * `GET /filestore/{view|download}/{id}` serves the bytes — streamed from disk with caching and
 * Range support, or as a short-lived redirect to a presigned bucket URL carrying the same headers.
 * The filestore route lives outside /api: a public file or a valid signature needs no credential
 * (a browser <img> sends none). Otherwise — also when a signature is present but invalid or expired
 * — the caller's credential (header or session cookie) decides: it must let it read the file (see
 * `canRead`). Unreadable is 404, as on every route; a bad signature that no credential makes good
 * is 403.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AccessError, AuthenticationError, BadRequest, NotFound } from '../../errors.js';
import { assertValidDatabaseName } from '../../db/database-name.js';
import { assertRight } from '../../access/record-access.js';
import { currentEnv } from '../../orm/env.js';
import type { FileStore } from '../../files/filestore.js';
import { QuerySet } from '../../orm/queryset.js';
import { attachmentFile, type AttachmentFile } from '../../orm/system/attachment-store.js';
import type { Platform } from '../../platform/platform.js';
import { cacheControl, contentDisposition, contentType, parseRange } from '../../files/response-headers.js';
import { signedFileUrl, verifyFileSignature, SIGNED_URL_SECONDS, type FileAction } from '../../files/signed-url.js';
import type { DatabaseSelector } from '../database-selection.js';
import { apiContextHook, IN_UNIT_OF_WORK, readOnlyWork } from '../request-context.js';
import { SESSION_COOKIE } from '../session-cookies.js';
import { recordId } from './request-body.js';

/** Lifetime of the redirect to a bucket's presigned URL. */
const PRESIGNED_SECONDS = 60;
const BAD_LINK = 'The file link is invalid or has expired';

/**
 * Whether the current principal may read attachment `row` — Odoo's ir.attachment semantics: a file
 * with an owner (`model` + `record`) is readable by whoever can read the owning record (its model
 * right, record rules and company isolation, through the ORM's read; an owner that is gone or
 * unreadable → false); a file without owner by whoever can read it as an Attachment (no read
 * right on Attachment at all is a 403, as for any model; its record rules apply). One statement.
 */
async function canRead(row: AttachmentFile): Promise<boolean> {
  const { registry } = currentEnv();
  if (row.model !== null && row.record !== null) {
    if (!registry.models.has(row.model)) return false;
    try {
      return await new QuerySet(registry.meta(row.model)).with_archived().filter({ id: row.record }).exists();
    } catch (err) {
      if (err instanceof AccessError) return false;
      throw err;
    }
  }
  const attachments = registry.meta('Attachment');
  assertRight(attachments, 'read');
  return new QuerySet(attachments).with_archived().filter({ id: row.id }).exists();
}

function action(req: FastifyRequest): FileAction {
  const a = (req.params as { action: string }).action;
  if (a !== 'view' && a !== 'download') throw new NotFound(`No route GET /filestore/${String(a).slice(0, 20)}`);
  return a;
}

export function registerFileRoutes(app: FastifyInstance, platform: Platform, selector: DatabaseSelector): void {
  const resolveCredential = apiContextHook(platform, selector);

  app.get('/api/files/:id/url', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, async () => {
    const id = recordId((req.params as { id: string }).id);
    const requested = (req.query as { action?: string }).action ?? 'view';
    if (requested !== 'view' && requested !== 'download') throw new BadRequest("'action' is 'view' or 'download'");
    // On the pool, as `readOnlyWork` runs: the row is read whoever asks; `canRead` decides.
    const row = await attachmentFile(req.ff!.db.executor, id);
    if (!row || !(await canRead(row))) throw new NotFound(`Attachment ${id} does not exist`);
    const url = signedFileUrl(platform.secret, req.ff!.dbName, id, requested);
    return { url, expires_at: new Date(Date.now() + SIGNED_URL_SECONDS * 1000).toISOString() };
  }));

  app.get('/filestore/:action/:id', async (req, reply) => {
    const act = action(req);
    const id = recordId((req.params as { id: string }).id);
    const query = req.query as { db?: string; expires?: string; sig?: string };
    const dbName = query.db !== undefined ? assertValidDatabaseName(query.db) : await selector.select(req);
    const db = await platform.database(dbName);
    const row = await attachmentFile(db.executor, id);
    const signed = query.sig !== undefined;
    let granted = row?.is_public === true
      || (signed && verifyFileSignature(platform.secret, dbName, id, act, query.expires, query.sig));
    // An invalid or expired signature is no refusal by itself: the credential may still grant it.
    if (!granted) {
      if (req.headers.authorization === undefined && !req.cookies?.[SESSION_COOKIE]) {
        if (signed) throw new AccessError(BAD_LINK);
        throw new AuthenticationError('Missing credential: send "Authorization: Bearer <credential>" or use a signed URL');
      }
      await resolveCredential(req);
      if (req.ff!.dbName !== dbName) throw new BadRequest('The db parameter names another database than the credential');
      granted = row !== undefined && (await readOnlyWork(req, () => canRead(row)));
      if (!granted && signed) throw new AccessError(BAD_LINK);
    }
    if (!row || !granted) throw new NotFound(`Attachment ${id} does not exist`);
    return serve(req, reply, row, act, platform.files.store);
  });
}

async function serve(req: FastifyRequest, reply: FastifyReply, row: AttachmentFile, act: FileAction, store: FileStore): Promise<unknown> {
  if (!row.filepath) throw new NotFound(`Attachment ${row.id} has no content`);
  const headers = {
    contentType: contentType(row.mimetype),
    contentDisposition: contentDisposition(act, row.name),
    cacheControl: cacheControl(row.is_public),
  };
  const presigned = await store.presignedUrl(row.filepath, { ...headers, expiresIn: PRESIGNED_SECONDS });
  if (presigned) {
    // The redirect itself must not outlive the presigned URL it points at.
    return reply.header('Cache-Control', 'private, no-store').redirect(presigned, 302);
  }
  const stat = await store.stat(row.filepath);
  if (!stat) throw new NotFound(`The content of attachment ${row.id} is missing from the file store`);
  const etag = `"${row.checksum ?? row.filepath.slice(row.filepath.lastIndexOf('/') + 1)}"`;
  reply.header('Content-Type', headers.contentType)
    .header('Content-Disposition', headers.contentDisposition)
    .header('Cache-Control', headers.cacheControl)
    .header('ETag', etag)
    .header('Accept-Ranges', 'bytes')
    .header('X-Content-Type-Options', 'nosniff')
    // Uploaded HTML or SVG viewed inline must not run script on our origin.
    .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
  if (req.headers['if-none-match'] === etag) return reply.status(304).send();
  const range = parseRange(req.headers.range, stat.size);
  if (range === 'unsatisfiable') {
    return reply.status(416).header('Content-Range', `bytes */${stat.size}`).send();
  }
  if (range) {
    reply.status(206).header('Content-Range', `bytes ${range.start}-${range.end}/${stat.size}`).header('Content-Length', range.end - range.start + 1);
    return reply.send(await store.read(row.filepath, range));
  }
  reply.header('Content-Length', stat.size);
  return reply.send(await store.read(row.filepath));
}
