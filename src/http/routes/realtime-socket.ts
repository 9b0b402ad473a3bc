/**
 * `GET /api/ws` (CONTRACTS C4): the main realtime socket. The upgrade request is an ordinary
 * `/api/` request to Fastify — database (`?db=` too) and credential are resolved by the request
 * context hook, so a refusal is the HTTP answer to the upgrade (400, 401, 404, 503) and no socket
 * opens. A browser's session cookie also needs an `Origin` of this very host (403 otherwise), so
 * that another site's page cannot open a socket with the visitor's cookie. The socket itself is
 * the hub's (`realtime/socket-hub.ts`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { assertWatchable } from '../../api/watch-target.js';
import { AccessError, BadRequest } from '../../errors.js';
import type { SocketHub } from '../../realtime/socket-hub.js';
import { readAsNow } from '../request-context.js';

export function registerRealtimeSocketRoute(app: FastifyInstance, hub: SocketHub): void {
  app.route({
    method: 'GET',
    url: '/api/ws',
    config: { databaseFromQuery: true },
    preValidation: assertSameOrigin,
    // A plain GET (no upgrade) is answered like any malformed request.
    handler: async () => {
      throw new BadRequest('GET /api/ws opens a WebSocket: send the request with "Upgrade: websocket"');
    },
    wsHandler: (socket, req) => connect(hub, socket, req),
  });
}

/** Hands the authenticated socket to the hub, with what it needs of the request's credential. */
function connect(hub: SocketHub, socket: WebSocket, req: FastifyRequest): Promise<void> {
  const ctx = req.ff!;
  return hub.connect(socket, {
    db: ctx.dbName,
    uid: ctx.uid,
    sessionId: ctx.principal.serviceAccountId === null ? (ctx.principal.sessionId ?? null) : null,
    keyHash: ctx.keyHash,
    assertReadable: (model, id) => readAsNow(ctx, () => assertWatchable(model, id)),
  });
}

/** A socket opened with the session cookie (no Authorization header) must come from this host's pages. */
async function assertSameOrigin(req: FastifyRequest): Promise<void> {
  if (req.headers.authorization !== undefined) return;
  const origin = req.headers.origin;
  let host: string | null = null;
  try {
    host = origin ? new URL(origin).host : null;
  } catch {
    host = null;
  }
  if (!host || host !== req.headers.host) {
    throw new AccessError('A socket opened with the session cookie needs an Origin of this host');
  }
}
