/**
 * The HTTP application: Fastify with the request log, the error catalogue's renderer, database
 * selection and credential check on every `/api/*` route, and the generic model API.
 */
import fastifyCookie from '@fastify/cookie';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { BadRequest } from '../errors.js';
import type { Platform } from '../platform/platform.js';
import { SocketHub, type HubOptions } from '../realtime/socket-hub.js';
import { VisitorHub, type VisitorHubOptions } from '../realtime/visitor-hub.js';
import { registerLiveChatRoutes, visitorSessions } from './routes/livechat.js';
import { registerLiveChatWidgetRoutes } from './routes/livechat-widget.js';
import { DatabaseSelector } from './database-selection.js';
import { installErrorHandler } from './error-handler.js';
import { apiContextHook } from './request-context.js';
import { echoRequestId, loggerOptions, type LogOptions } from './request-log.js';
import { registerApiDocsRoutes } from './routes/api-docs.js';
import { registerAccountRoutes } from './routes/account.js';
import { registerApiKeyRoutes } from './routes/api-keys.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerBulkRoutes } from './routes/bulk.js';
import { registerExportRoutes } from './routes/export.js';
import { registerFileRoutes } from './routes/files.js';
import { registerFormRoutes } from './routes/forms.js';
import { registerImportPreviewRoutes } from './routes/import-preview.js';
import { registerImportRoutes } from './routes/import.js';
import { registerMenuRoutes } from './routes/menus.js';
import { registerModelApi } from './routes/model-api.js';
import { registerModuleRoutes } from './routes/modules.js';
import { registerPresenceRoutes } from './routes/presence.js';
import { registerActivityStreamRoutes } from './routes/activity-stream.js';
import { registerPushRoutes } from './routes/push.js';
import { registerRealtimeSocketRoute } from './routes/realtime-socket.js';
import { registerReportRoutes } from './routes/reports.js';
import { registerResequenceRoutes } from './routes/resequence.js';
import { registerSessionUserRoutes } from './routes/session-user.js';
import { registerWebAssetRoutes } from './routes/web-assets.js';
import { registerWebModuleRoutes } from './routes/web-modules.js';
import { registerWebPageRoutes } from './routes/web-pages.js';

/** Deepest nesting of arrays and objects accepted in a JSON request body. */
export const MAX_JSON_DEPTH = 64;

/** True when arrays/objects in `value` nest deeper than `max` levels (iterative: no recursion). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v as object)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

export interface AppOptions {
  dev?: boolean;
  /** Access-token lifetime in hours (`FF_SESSION_HOURS`, default 8). */
  sessionHours?: number;
  /** ALTCHA difficulty; lowered by tests so they solve challenges in milliseconds. */
  altchaMaxNumber?: number;
  bodyLimit?: number;
  /**
   * Largest `/api/import` body and import-preview file (`FF_IMPORT_LIMIT`, default 100 MiB): a
   * spreadsheet of 100,000 rows outgrows the ordinary body limit.
   */
  importLimit?: number;
  /** Most records a selection or bulk call may cover (`FF_BULK_MAX`, default 10,000). */
  bulkMax?: number;
  /** Level, format and destination of the request log (`request-log.ts`); none by default (tests). */
  logger?: LogOptions | false;
  /** The realtime socket's bounds and rhythms (`FF_WS_*`; tests shorten the intervals). */
  realtime?: RealtimeOptions;
  /** The live-chat visitor socket's rhythms (tests shorten them). */
  livechat?: Omit<VisitorHubOptions, 'sessions'>;
}

export interface RealtimeOptions extends Omit<HubOptions, 'openDatabase'> {
  /** Largest frame a client may send, bytes; larger closes the socket with 1009 (`FF_WS_MAX_FRAME`, 64 KiB). */
  maxFrameBytes?: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This worker's realtime sockets (`realtime/socket-hub.ts`). */
    realtime: SocketHub;
    /** This worker's live-chat visitor sockets (`realtime/visitor-hub.ts`). */
    livechat: VisitorHub;
  }
}

export async function buildApp(platform: Platform, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ ...loggerOptions(options.logger ?? false), bodyLimit: options.bodyLimit ?? 16 * 1024 * 1024 });
  // First of all hooks, so that every answer carries it, refusals of later hooks included.
  app.addHook('onRequest', echoRequestId);
  installErrorHandler(app, options.dev ?? false);
  // An empty JSON body means "no parameters" (e.g. a query with defaults), not an error.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (!text) return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      const err = new Error('The request body is not valid JSON') as Error & { statusCode: number };
      err.statusCode = 400;
      return done(err, undefined);
    }
    // Hostile nesting would overflow recursive code further on (line writes, error messages).
    if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) {
      return done(new BadRequest(`The request body is nested too deeply (more than ${MAX_JSON_DEPTH} levels)`), undefined);
    }
    done(null, parsed);
  });
  await app.register(fastifyCookie);
  const { maxFrameBytes, ...hubOptions } = options.realtime ?? {};
  await app.register(fastifyWebsocket, { options: { maxPayload: maxFrameBytes ?? 64 * 1024 } });
  const hub = new SocketHub(platform.bus, { ...hubOptions, openDatabase: async (name) => (await platform.database(name)).executor });
  app.decorate('realtime', hub);
  // Which worker took a socket: for operators tracing a connection, and for the multi-worker test.
  app.websocketServer.on('headers', (headers: string[]) => headers.push(`X-FF-Worker: ${hub.id}`));
  app.addHook('onClose', () => hub.stop());
  const visitors = new VisitorHub(platform.bus, { sessions: visitorSessions(platform), ...(options.livechat ?? {}) });
  app.decorate('livechat', visitors);
  app.addHook('onClose', () => visitors.stop());
  const selector = new DatabaseSelector(platform.engine);
  const contextHook = apiContextHook(platform, selector);
  app.addHook('onRequest', async (req) => {
    if (req.url.startsWith('/api/') || req.routeOptions.config?.authenticated) await contextHook(req);
  });
  registerModelApi(app, { bulkMax: options.bulkMax, pdf: platform.pdf });
  registerReportRoutes(app, platform.pdf, { bulkMax: options.bulkMax });
  registerAuthRoutes(app, platform, selector, { sessionHours: options.sessionHours ?? 8, altchaMaxNumber: options.altchaMaxNumber });
  registerBulkRoutes(app, { bulkMax: options.bulkMax });
  registerExportRoutes(app, { bulkMax: options.bulkMax });
  registerImportRoutes(app, { bulkMax: options.bulkMax, bodyLimit: options.importLimit });
  registerImportPreviewRoutes(app, { bulkMax: options.bulkMax, maxFileBytes: options.importLimit });
  registerResequenceRoutes(app, { bulkMax: options.bulkMax });
  registerApiKeyRoutes(app);
  registerAccountRoutes(app);
  registerModuleRoutes(app, platform.catalog);
  registerApiDocsRoutes(app, platform, selector, { bulkMax: options.bulkMax });
  registerFileRoutes(app, platform, selector);
  registerFormRoutes(app);
  registerWebAssetRoutes(app);
  registerWebModuleRoutes(app, platform.catalog);
  registerWebPageRoutes(app, selector);
  registerSessionUserRoutes(app);
  registerMenuRoutes(app);
  registerRealtimeSocketRoute(app, hub);
  registerPresenceRoutes(app, platform.bus.presence);
  registerActivityStreamRoutes(app);
  registerPushRoutes(app, platform, selector);
  registerLiveChatRoutes(app, platform, selector, visitors, { altchaMaxNumber: options.altchaMaxNumber });
  registerLiveChatWidgetRoutes(app);
  app.get('/health', async () => ({ status: 'ok' }));
  return app;
}
