/**
 * The HTTP application: Fastify with the error catalogue's renderer, database selection and
 * credential check on every `/api/*` route, and the generic model API.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Platform } from '../platform/platform.js';
import { DatabaseSelector } from './database-selection.js';
import { installErrorHandler } from './error-handler.js';
import { apiContextHook } from './request-context.js';
import { registerModelApi } from './routes/model-api.js';

export interface AppOptions {
  dev?: boolean;
  bodyLimit?: number;
  logger?: boolean;
}

export async function buildApp(platform: Platform, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: options.bodyLimit ?? 16 * 1024 * 1024 });
  installErrorHandler(app, options.dev ?? false);
  // An empty JSON body means "no parameters" (e.g. a query with defaults), not an error.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (!text) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      const err = new Error('The request body is not valid JSON') as Error & { statusCode: number };
      err.statusCode = 400;
      done(err, undefined);
    }
  });
  const selector = new DatabaseSelector(platform.engine);
  const contextHook = apiContextHook(platform, selector);
  app.addHook('onRequest', async (req) => {
    if (req.url.startsWith('/api/')) await contextHook(req);
  });
  registerModelApi(app);
  app.get('/health', async () => ({ status: 'ok' }));
  return app;
}
