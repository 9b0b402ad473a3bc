/**
 * Web Push routes (CONTRACTS C5): `GET /api/push/key` → `{public_key}`; `POST /api/push/subscribe`
 * `{subscription}` and `POST /api/push/unsubscribe` `{endpoint}`. A subscription is a person's
 * browser: subscribing and unsubscribing need a signed-in session (an API key → 403).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AccessError } from '../../errors.js';
import { pushKey, pushSubscribe, pushUnsubscribe } from '../../api/push.js';
import { IN_UNIT_OF_WORK, readOnlyWork, unitOfWork } from '../request-context.js';

function assertPerson(req: FastifyRequest): void {
  if (req.ff!.keyHash !== null) throw new AccessError('Web Push subscriptions belong to a signed-in person\'s browser, not an API key');
}

export function registerPushRoutes(app: FastifyInstance): void {
  app.get('/api/push/key', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => pushKey()));
  app.post('/api/push/subscribe', IN_UNIT_OF_WORK, (req) => {
    assertPerson(req);
    return unitOfWork(req, () => pushSubscribe(req.body));
  });
  app.post('/api/push/unsubscribe', IN_UNIT_OF_WORK, (req) => {
    assertPerson(req);
    return unitOfWork(req, () => pushUnsubscribe(req.body));
  });
}
