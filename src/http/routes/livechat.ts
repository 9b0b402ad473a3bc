/**
 * The live chat's visitor side (spec §4.10, §5, CONTRACTS C5 "Live chat"), for a widget embedded in
 * any website: plain HTTP posts for what the visitor sends, and a socket for what it receives.
 *
 * * `GET /livechat/altcha` → a challenge; `POST /livechat/session` `{altcha, name?, email?}` →
 *   `{session_id, token, agents_online}` (no solved challenge: 'Human verification failed.');
 * * `POST /livechat/message` `{token, content}` → `{id}`; `POST /livechat/attachment` `{token, name,
 *   base64, mimetype?}` → `{id, message_id, name, mimetype, url}` (a signed URL);
 * * `GET /livechat/ws?token=…&db=…&after_id=…`: the visitor socket (`realtime/visitor-hub.ts`).
 *
 * The visitor has no cookie and no account: the token is its bearer (a bad, closed or other
 * database's token → 401), and the platform acts for it. The database is chosen as for `/api`
 * (`X-DB-NAME`, the host) or by `?db=`. These routes, and only these, answer any origin (CORS `*`,
 * never with credentials), so another site's page can use them and nothing else.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { liveChat, postVisitorAttachment, postVisitorMessage, startVisitorSession } from '../../api/livechat.js';
import { createAltchaChallenge, HUMAN_VERIFICATION_FAILED, verifyAltcha } from '../../auth/altcha.js';
import { purposeKey } from '../../config/secret.js';
import { readPlatformState } from '../../db/platform-state.js';
import { AuthenticationError, BadRequest, DatabaseBusy } from '../../errors.js';
import { signedFileUrl } from '../../files/signed-url.js';
import type { Platform } from '../../platform/platform.js';
import { VisitorHub, type VisitorSessions } from '../../realtime/visitor-hub.js';
import type { DatabaseSelector } from '../database-selection.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The visitor socket's session, found by its token before the upgrade is answered. */
    livechatSession?: { db: string; id: number; afterId: number | null };
  }
}

export interface LiveChatRouteOptions {
  altchaMaxNumber?: number;
  /** Largest attachment body (base64 JSON), bytes. */
  attachmentBodyLimit?: number;
}

/** The hub's units of work, each in its own elevated transaction of the session's database. */
export function visitorSessions(platform: Platform): VisitorSessions {
  const run = <T>(db: string, fn: () => Promise<T>) => platform.run(db, {}, fn);
  return {
    history: (db, id, afterId) => run(db, () => liveChat().visitor_history(id, afterId)),
    seen: (db, ids) => run(db, () => liveChat().visitor_seen(ids)),
    presence: (db, changes) => run(db, () => liveChat().visitor_presence(changes)),
    typing: (db, ids) => run(db, () => liveChat().visitor_typing(ids)),
    attachmentUrl: (db, id) => signedFileUrl(platform.secret, db, id, 'view'),
  };
}

export function registerLiveChatRoutes(app: FastifyInstance, platform: Platform, selector: DatabaseSelector, hub: VisitorHub, options: LiveChatRouteOptions = {}): void {
  const altchaSecret = purposeKey(platform.secret, 'altcha').toString('base64url');

  /** The request's database (`?db=` too), refused while it installs. */
  async function database(req: FastifyRequest): Promise<string> {
    const dbName = await selector.select(req, { socket: true });
    if ((await readPlatformState((await platform.database(dbName)).executor)).installing) {
      throw new DatabaseBusy(`Database '${dbName}' is installing or upgrading modules; retry shortly`);
    }
    return dbName;
  }

  app.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/livechat/')) return;
    void reply.header('Access-Control-Allow-Origin', '*');
    void reply.header('Cache-Control', 'no-store');
  });
  app.options('/livechat/*', async (_req, reply) => {
    void reply.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    void reply.header('Access-Control-Allow-Headers', 'Content-Type, X-DB-NAME');
    void reply.header('Access-Control-Max-Age', '600');
    return reply.status(204).send();
  });

  app.get('/livechat/altcha', async (req) => createAltchaChallenge(altchaSecret, await database(req), options.altchaMaxNumber ? { maxNumber: options.altchaMaxNumber } : {}));

  app.post('/livechat/session', async (req) => {
    const dbName = await database(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || Array.isArray(body)) throw new BadRequest('The body must be a JSON object');
    // The proof of work first: without it nothing else is looked at, nothing written.
    if (!(await verifyAltcha((await platform.database(dbName)).executor, altchaSecret, body.altcha, dbName))) {
      throw new BadRequest(HUMAN_VERIFICATION_FAILED);
    }
    return platform.run(dbName, {}, () => startVisitorSession(body));
  });

  app.post('/livechat/message', async (req) => {
    const dbName = await database(req);
    return platform.run(dbName, {}, () => postVisitorMessage(req.body));
  });

  app.post('/livechat/attachment', { bodyLimit: options.attachmentBodyLimit ?? 16 * 1024 * 1024 }, async (req) => {
    const dbName = await database(req);
    const posted = await platform.run(dbName, {}, () => postVisitorAttachment(req.body));
    return { ...posted, url: signedFileUrl(platform.secret, dbName, posted.id, 'view') };
  });

  app.route({
    method: 'GET',
    url: '/livechat/ws',
    preHandler: async (req) => {
      const dbName = await database(req);
      const query = req.query as Record<string, unknown>;
      const session = await platform.run(dbName, {}, () => liveChat().visitor_session(query.token));
      if (!session) throw new AuthenticationError('Invalid live-chat token');
      if (session.state !== 'open') throw new AuthenticationError('This chat is closed');
      req.livechatSession = { db: dbName, id: session.id, afterId: afterId(query.after_id) };
    },
    handler: async () => {
      throw new BadRequest('GET /livechat/ws opens a WebSocket: send the request with "Upgrade: websocket"');
    },
    wsHandler: (socket: WebSocket, req: FastifyRequest) => {
      const { db, id, afterId: after } = req.livechatSession!;
      return hub.connect(socket, db, id, after);
    },
  });
}

function afterId(value: unknown): number | null {
  if (value === undefined || value === '') return null;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isSafeInteger(n) || n < 0) throw new BadRequest('after_id must be a message id');
  return n;
}
