/**
 * API reference share administration (CONTRACTS C2 "API reference"): create a share (its token
 * and link shown once), list shares (never a token), revoke one. Rights decide who may — `create`,
 * `read`, `write` on ApiDocsShare, which the core module grants administrators only. The work is
 * `auth/api-docs-shares.ts`'s; the handlers parse the request and shape the answer.
 *
 *   POST   /api/api-docs-shares       {name, expires_at?} → {id, name, token, url, expires_at}
 *   GET    /api/api-docs-shares       → [{id, name, expires_at, active, last_used_at, created_date, created_by}]
 *   DELETE /api/api-docs-shares/{id}  → {id, revoked: true}
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertRight } from '../../access/record-access.js';
import { createApiDocsShare, listApiDocsShares, revokeApiDocsShare } from '../../auth/api-docs-shares.js';
import { BadRequest } from '../../errors.js';
import { currentEnv } from '../../orm/env.js';
import { IN_UNIT_OF_WORK, readOnlyWork, unitOfWork } from '../request-context.js';
import { RequestBody, recordId } from './request-body.js';

const CREATE_KEYS = new Set(['name', 'expires_at']);

/** The origin of this server as the request reached it (`http://127.0.0.1:8000`). */
export function requestOrigin(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

/**
 * The absolute link a share opens: `/api-docs?token=…` on this server, plus `&db=<name>` unless
 * the host already names the database — a browser sends no `X-DB-NAME`, and a server with several
 * databases could not tell which one the token belongs to otherwise.
 */
export function shareUrl(req: FastifyRequest, dbName: string, token: string): string {
  const hostLabel = req.hostname.split('.')[0]?.toLowerCase();
  const db = hostLabel === dbName ? '' : `&db=${encodeURIComponent(dbName)}`;
  return `${requestOrigin(req)}/api-docs?token=${encodeURIComponent(token)}${db}`;
}

export function registerApiDocsShareRoutes(app: FastifyInstance): void {
  app.post('/api/api-docs-shares', IN_UNIT_OF_WORK, (req) => unitOfWork(req, async () => {
    // Before reading the body: someone without the right learns nothing from validation messages.
    assertRight(currentEnv().registry.meta('ApiDocsShare'), 'create');
    const body = new RequestBody(req.body);
    // A misspelt option (`expire_at`) must not silently give a link that never expires.
    const unknown = Object.keys(body.raw).find((k) => !CREATE_KEYS.has(k));
    if (unknown !== undefined) throw new BadRequest(`Unknown key '${unknown.slice(0, 40)}': expected name, expires_at`);
    const created = await createApiDocsShare({ name: body.raw.name, expiresAt: body.raw.expires_at });
    return {
      id: created.id, name: created.name, token: created.token,
      url: shareUrl(req, req.ff!.dbName, created.token), expires_at: created.expiresAt,
    };
  }));

  app.get('/api/api-docs-shares', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => listApiDocsShares()));

  app.delete('/api/api-docs-shares/:id', IN_UNIT_OF_WORK, (req) => unitOfWork(req, async () => {
    assertRight(currentEnv().registry.meta('ApiDocsShare'), 'write');
    const id = recordId((req.params as { id: string }).id);
    await revokeApiDocsShare(id);
    return { id, revoked: true };
  }));
}
