/**
 * What the server logs about requests, through Fastify's logger (pino): one JSON object per line
 * for log collectors, or pino-pretty's lines for people (`FF_LOG_FORMAT=pretty`), at
 * `FF_LOG_LEVEL` (default `info`).
 *
 * * Every answer carries `X-Request-Id`: the proxy's own when it sent a well-formed one (so one id
 *   follows the request through every tier), else a fresh UUID. Every line a request logs carries
 *   it as `reqId`.
 * * Every failed request is logged once, by the error handler (`logFailure`): a 500 at `error` and
 *   a declared 5xx (database busy or unavailable, statement timeout) at `warn`, each with request
 *   id, method, route, database, caller, error class, message and stack; a 4xx at `info`, without
 *   stack (the client's mistake, not the server's). Fastify's convention, with a 503 the operator
 *   expects during upgrades kept out of `error`.
 * * Fastify's access lines ("incoming request", "request completed") are at `debug`: a busy server
 *   at `info` logs what needs attention, not every request.
 * * URLs are logged without their query string: signed file links carry their signature there.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type PinoPretty from 'pino-pretty';
import type { LogLevel } from '../config/settings.js';

export interface LogOptions {
  level: LogLevel;
  /** `json`: one object per line; `pretty`: pino-pretty, for a terminal. */
  format: 'json' | 'pretty';
  /** Where lines go; standard output by default. */
  stream?: NodeJS.WritableStream;
}

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * An incoming request id worth keeping: UUIDs, W3C trace ids, AWS `Root=1-…;Parent=…` and the like.
 * Anything else (too long, spaces, control characters, quotes) is replaced rather than trusted
 * into every log line and answer header.
 */
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._~:/+=;@-]{1,128}$/;

/** Fastify's `genReqId`: the proxy's well-formed `X-Request-Id`, else a new UUID. */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && WELL_FORMED_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Fastify's own per-request lines, moved to `debug`. */
class AccessLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // An error here is the response stream failing after the answer began: no handler saw it.
    if (error) reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/**
 * pino-pretty, loaded only for `FF_LOG_FORMAT=pretty`: ~13 ms of the start otherwise. `require`,
 * because `loggerOptions` is synchronous; pino-pretty is CommonJS, so this is the module `import`
 * would load (and a missing one throws here, where the logger is made, as it did at start).
 */
function pinoPretty(options: PinoPretty.PrettyOptions): PinoPretty.PrettyStream {
  return (createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty)(options);
}

/** The Fastify options giving the logger described above (`false`: no logger at all). */
export function loggerOptions(options: LogOptions | false): Pick<FastifyServerOptions, 'logger' | 'logController' | 'genReqId'> {
  if (!options) return { logger: false, genReqId: requestIdFor };
  const stream = options.format === 'pretty'
    ? pinoPretty({
      destination: options.stream ?? 1,
      // Synchronous, as pino's own standard output: the last lines before an exit are not lost.
      sync: true,
      colorize: options.stream === undefined && process.stdout.isTTY,
      translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
      ignore: 'pid,hostname',
    })
    : options.stream;
  return {
    logger: {
      level: options.level,
      ...(stream ? { stream } : {}),
      serializers: {
        req: (req: FastifyRequest) => ({ method: req.method, url: pathOf(req.url), host: req.host, remoteAddress: req.ip }),
      },
    },
    logController: new AccessLogController(),
    genReqId: requestIdFor,
  };
}

/** Sets `X-Request-Id` on every answer, before anything can fail. */
export function echoRequestId(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  void reply.header(REQUEST_ID_HEADER, req.id);
  done();
}

/** The database each request selected (`DatabaseSelector`), for its log lines. */
const selectedDatabases = new WeakMap<FastifyRequest, string>();

export function noteSelectedDatabase(req: FastifyRequest, name: string): void {
  selectedDatabases.set(req, name);
}

/** How the error handler logs a failed request (see the file comment); `message` is the answer's `detail` for a 4xx. */
export function logFailure(req: FastifyRequest, err: Error, status: number, errorName: string, message = err.message): void {
  const context = {
    status,
    error: errorName,
    method: req.method,
    route: req.routeOptions.url ?? null,
    url: pathOf(req.url),
    db: req.ff?.dbName ?? selectedDatabases.get(req) ?? null,
    caller: callerOf(req),
  };
  if (status >= 500) {
    const line = { ...context, err };
    if (status === 500) req.log.error(line, message);
    else req.log.warn(line, message);
  } else {
    req.log.info(context, message);
  }
}

/** Whom the request's credential stands for, once resolved: its user and its session or service account. */
function callerOf(req: FastifyRequest): Record<string, number | null> | null {
  const ctx = req.ff;
  if (!ctx) return null;
  return { uid: ctx.uid, service_account: ctx.principal.serviceAccountId, session: ctx.principal.sessionId ?? null };
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
