/**
 * `GET /auth/me`: the signed-in caller as the web client's shell shows it (`auth/session-user.ts`).
 * Resolved like `/api/*` (session cookie or bearer); 401 when signed out, which is how the shell
 * learns it must sign in.
 */
import type { FastifyInstance } from 'fastify';
import { describeSessionUser } from '../../auth/session-user.js';
import { readOnlyWork } from '../request-context.js';

const SIGNED_IN = { config: { unitOfWork: true, authenticated: true } } as const;

export function registerSessionUserRoutes(app: FastifyInstance): void {
  app.get('/auth/me', SIGNED_IN, (req, reply) => readOnlyWork(req, () => {
    void reply.header('Cache-Control', 'no-store');
    return describeSessionUser(req.ff!.dbName, { acceptLanguage: req.headers['accept-language'] ?? null });
  }));
}
