/**
 * `GET /api/ws` (CONTRACTS C4): the main realtime socket. The upgrade request is an ordinary
 * `/api/` request to Fastify — database (`?db=` too) and credential are resolved by the request
 * context hook, so a refusal is the HTTP answer to the upgrade (400, 401, 404, 503) and no socket
 * opens. A browser's session cookie also needs an `Origin` of this very host (403 otherwise), so
 * that another site's page cannot open a socket with the visitor's cookie. The socket itself is
 * the hub's (`realtime/socket-hub.ts`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import { assertWatchable, watchedState, type WatchedState } from '../../api/watch-target.js';
import { AccessError, BadRequest } from '../../errors.js';
import type { SocketOwner } from '../../realtime/socket-client.js';
import type { SocketHub } from '../../realtime/socket-hub.js';
import { confirmCredential, readAsNow, type RequestContext } from '../request-context.js';

export function registerRealtimeSocketRoute(app: FastifyInstance, hub: SocketHub): void {
  app.route({
    method: 'GET',
    url: '/api/ws',
    // A credential this worker remembers is confirmed by one statement before the upgrade is
    // answered, instead of resolved in full for every socket: revoked, expired or changed since,
    // the upgrade gets the HTTP answer (401, 503) it gets when not remembered.
    config: { databaseFromQuery: true, unitOfWork: true },
    preValidation: assertSameOrigin,
    preHandler: confirmCredential,
    // A plain GET (no upgrade) is answered like any malformed request.
    handler: async () => {
      throw new BadRequest('GET /api/ws opens a WebSocket: send the request with "Upgrade: websocket"');
    },
    wsHandler: (socket, req) => connect(hub, socket, req),
  });
}

/**
 * Hands the authenticated socket to the hub, with what it needs of the request's credential —
 * and nothing more: an idle socket lives for hours, so it must not hold on to its upgrade
 * request (measured in `bench/realtime-bench.ts`, `docs/decisions.md` "Realtime benchmarks").
 */
function connect(hub: SocketHub, socket: WebSocket, req: FastifyRequest): Promise<void> {
  releaseUpgradeRequest(socket, req);
  return hub.connect(socket, socketOwner(req.ff!));
}

/**
 * What a socket keeps of its request context: database, user, session, key hash and the means of
 * resolving the credential and rights afresh for each watch (`resolveAgain`, the request hook's
 * closure over the credential) — not the context itself, whose access profile (groups, rights,
 * rules) is resolved again on every watch anyway. A class rather than closures: its methods are
 * shared by every socket (under tsx, each named closure also carries a property array of its own).
 */
function socketOwner(ctx: RequestContext): SocketOwner {
  const sessionId = ctx.principal.serviceAccountId === null ? (ctx.principal.sessionId ?? null) : null;
  return new UpgradeCredential(ctx.dbName, ctx.uid, sessionId, ctx.keyHash, ctx.resolveAgain);
}

class UpgradeCredential implements SocketOwner {
  /** All `readAsNow` reads of a context. */
  readonly #credential: Pick<RequestContext, 'resolveAgain'>;

  constructor(
    readonly db: string,
    readonly uid: number,
    readonly sessionId: number | null,
    readonly keyHash: string | null,
    resolveAgain: RequestContext['resolveAgain'],
  ) {
    this.#credential = { resolveAgain };
  }

  assertReadable(model: string, id: number): Promise<void> {
    return readAsNow(this.#credential, () => assertWatchable(model, id));
  }

  readWatched(model: string, id: number): Promise<WatchedState> {
    return readAsNow(this.#credential, () => watchedState(model, id));
  }
}

/**
 * Lets the upgrade request go once the socket is open. `@fastify/websocket` answers a socket's
 * errors through a listener that holds the Fastify request and reply (and through them the raw
 * request, its headers and the ServerResponse it made for the upgrade), and that response stays
 * attached to the TCP socket (`_httpMessage`): about 10 KiB per idle socket. The listener is
 * replaced by one doing what the plugin's default does (log through the request's logger, then
 * terminate), and the response is detached from the TCP socket, as Node does after a response.
 */
function releaseUpgradeRequest(socket: WebSocket, req: FastifyRequest): void {
  const log = req.log;
  socket.removeAllListeners('error');
  socket.on('error', (error) => {
    log.error(error);
    socket.terminate();
  });
  const tcp = (socket as unknown as { _socket?: { _httpMessage?: ServerResponse | null } })._socket;
  const response = tcp?._httpMessage;
  if (tcp && response && typeof response.detachSocket === 'function') response.detachSocket(tcp as never);
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
