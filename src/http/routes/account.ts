/**
 * The signed-in person's own account (Settings > My profile): `POST /auth/password` changes the
 * password — `{current_password, new_password}` → `{changed, other_sessions_revoked}` — for a
 * session only (an API key has no password). Like the second factor's routes it acts on the
 * caller's own user, elevated (`auth/password-change.ts`). The language is the generic API's
 * `User.set_my_language`; resetting someone else's second factor is `User.action_reset_second_factor`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { changeOwnPassword } from '../../auth/password-change.js';
import { BadRequest } from '../../errors.js';
import { withEnv } from '../../orm/env.js';
import { unitOfWork } from '../request-context.js';
import { RequestBody } from './request-body.js';

const SIGNED_IN = { config: { unitOfWork: true, authenticated: true } } as const;

export function registerAccountRoutes(app: FastifyInstance): void {
  app.post('/auth/password', SIGNED_IN, (req) => unitOfWork(req, async () => {
    const sessionId = sessionOf(req);
    const { raw } = new RequestBody(req.body);
    return withEnv({ su: true }, () => changeOwnPassword(req.ff!.uid, sessionId, raw.current_password, raw.new_password));
  }));
}

function sessionOf(req: FastifyRequest): number {
  const sessionId = req.ff!.principal.sessionId;
  if (sessionId === undefined || sessionId === null) {
    throw new BadRequest('This route is for a signed-in person (a session token), not an API key');
  }
  return sessionId;
}
