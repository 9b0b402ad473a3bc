/**
 * The per-database API reference (spec §1, §5; CONTRACTS C2 "API reference"):
 *
 *   GET /api-docs?token=…         a valid share token → an HttpOnly cookie scoped to /api-docs and a
 *                                 redirect to /api-docs (the token leaves the address bar); else 401 page
 *   GET /api-docs                 the reference page (with the cookie), else the 401 page
 *   GET /api-docs/openapi.json    the database's OpenAPI 3.1 document (cookie, or the share token as
 *                                 Bearer), else 401 `{detail, error}`
 *   GET /api-docs/assets/{file}   the vendored renderer (public: it is the same for every database)
 *
 * The database is the request's (`X-DB-NAME`, the host's first label, the only one), or the `db`
 * query parameter a share's link carries when the host does not name it — as on `/filestore`.
 * The share is checked against that database on every request, so revoking it (or its expiry)
 * shuts out the cookies it already issued too. The stock `/docs`, `/redoc` and `/openapi.json`
 * do not exist (404).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { openApiDocument } from '../../api/openapi-document.js';
import { resolveApiDocsShare } from '../../auth/api-docs-shares.js';
import { assertValidDatabaseName } from '../../db/database-name.js';
import { readPlatformState } from '../../db/platform-state.js';
import { AuthenticationError, DatabaseBusy, NotFound } from '../../errors.js';
import type { Registry } from '../../orm/registry.js';
import type { Platform } from '../../platform/platform.js';
import type { DatabaseSelector } from '../database-selection.js';
import { API_DOCS_ASSETS, API_DOCS_CSP, referencePage, unauthorizedPage } from './api-docs-page.js';
import { registerApiDocsShareRoutes, requestOrigin } from './api-docs-shares.js';

const DOCS_PATH = '/api-docs';
/** Longest a docs cookie lives (the share is checked on every request whatever the cookie says). */
const COOKIE_MAX_DAYS = 30;

/** One cookie per database, so references of several databases on one host stay open side by side. */
export function docsCookieName(dbName: string): string {
  return `ff_api_docs_${dbName}`;
}

interface DocsQuery {
  token?: string;
  db?: string;
}

/** `?db=NAME` when the link carries it (the share's own database), else the request's database. */
async function docsDatabase(req: FastifyRequest, selector: DatabaseSelector): Promise<{ dbName: string; fromQuery: boolean }> {
  const { db } = req.query as DocsQuery;
  if (typeof db === 'string') return { dbName: assertValidDatabaseName(db), fromQuery: true };
  return { dbName: await selector.select(req), fromQuery: false };
}

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers({
    'Cache-Control': 'no-store',
    'Content-Security-Policy': API_DOCS_CSP,
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  });
}

function denied(reply: FastifyReply): FastifyReply {
  return pageHeaders(reply).status(401).type('text/html; charset=utf-8').send(unauthorizedPage());
}

/** The share token of a docs request: its database's cookie, else an `Authorization: Bearer` share token. */
function presentedToken(req: FastifyRequest, dbName: string): string | null {
  const cookie = req.cookies?.[docsCookieName(dbName)];
  if (cookie) return cookie;
  const m = /^bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
  return m ? m[1]! : null;
}

export interface ApiDocsOptions {
  /** Most records a selection or bulk call may cover (`FF_BULK_MAX`), as the document states it. */
  bulkMax?: number;
}

export function registerApiDocsRoutes(app: FastifyInstance, platform: Platform, selector: DatabaseSelector, options: ApiDocsOptions = {}): void {
  registerApiDocsShareRoutes(app);
  /** Documents already generated, per registry (a new registry version is a new object) and origin. */
  const documents = new WeakMap<Registry, Map<string, string>>();

  app.get(DOCS_PATH, async (req, reply) => {
    const { dbName, fromQuery } = await docsDatabase(req, selector);
    const db = await platform.database(dbName);
    const back = fromQuery ? `${DOCS_PATH}?db=${encodeURIComponent(dbName)}` : DOCS_PATH;
    const { token } = req.query as DocsQuery;
    if (token !== undefined) {
      const share = typeof token === 'string' && token ? await resolveApiDocsShare(db.executor, token) : null;
      if (share === null) return denied(reply);
      const untilExpiry = share.expiresAt === null ? Infinity : Math.floor((share.expiresAt - Date.now()) / 1000);
      const maxAge = Math.max(1, Math.min(COOKIE_MAX_DAYS * 86_400, untilExpiry));
      void reply.setCookie(docsCookieName(dbName), token, {
        httpOnly: true, sameSite: 'lax', secure: req.protocol === 'https', path: DOCS_PATH, maxAge,
      });
      return pageHeaders(reply).redirect(back, 302);
    }
    const presented = presentedToken(req, dbName);
    if (!presented || (await resolveApiDocsShare(db.executor, presented)) === null) return denied(reply);
    const specUrl = `${DOCS_PATH}/openapi.json${fromQuery ? `?db=${encodeURIComponent(dbName)}` : ''}`;
    return pageHeaders(reply).type('text/html; charset=utf-8').send(referencePage(dbName, specUrl));
  });

  app.get(`${DOCS_PATH}/openapi.json`, async (req, reply) => {
    const { dbName } = await docsDatabase(req, selector);
    const db = await platform.database(dbName);
    const presented = presentedToken(req, dbName);
    if (!presented || (await resolveApiDocsShare(db.executor, presented)) === null) {
      throw new AuthenticationError('Missing, invalid, expired or revoked API reference link: open the link an administrator shared');
    }
    const state = await readPlatformState(db.executor);
    if (state.installing) throw new DatabaseBusy(`Database '${dbName}' is installing or upgrading modules; retry shortly`);
    const registry = await platform.registry(dbName, state.registryVersion);
    const origin = requestOrigin(req);
    let byOrigin = documents.get(registry);
    if (!byOrigin) documents.set(registry, (byOrigin = new Map()));
    let text = byOrigin.get(origin);
    if (text === undefined) {
      text = JSON.stringify(openApiDocument(registry, { dbName, serverUrl: origin, bulkMax: options.bulkMax }));
      byOrigin.set(origin, text);
    }
    return reply.headers({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' })
      .type('application/json; charset=utf-8').send(text);
  });

  app.get(`${DOCS_PATH}/assets/:file`, async (req, reply) => {
    const { file } = req.params as { file: string };
    const asset = API_DOCS_ASSETS.get(file);
    if (!asset) throw new NotFound(`No route GET ${DOCS_PATH}/assets/${file.slice(0, 60)}`);
    return reply.headers({ 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' })
      .type(asset.type).send(await asset.load());
  });
}
