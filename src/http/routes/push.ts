/**
 * Web Push routes (CONTRACTS C5): `GET /api/push/key` → `{public_key}`; `POST /api/push/subscribe`
 * `{subscription}` → `{subscribed, renewal_token, database}` and `POST /api/push/unsubscribe`
 * `{endpoint}`. A subscription is a person's browser: subscribing and unsubscribing need a
 * signed-in session (an API key → 403).
 *
 * `POST /push/renew` `{renewal_token, subscription}` → `{renewed: true}` is outside `/api/`: the
 * service worker calls it when the browser renews its subscription, hours or days after the
 * session it subscribed with expired, so the renewal token is its only credential. The database is
 * chosen as for an anonymous sign-in (the worker sends the `database` the subscribe answered).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AccessError, DatabaseBusy } from '../../errors.js';
import { pushKey, pushRenew, pushSubscribe, pushUnsubscribe } from '../../api/push.js';
import { readPlatformState } from '../../db/platform-state.js';
import type { Platform } from '../../platform/platform.js';
import type { DatabaseSelector } from '../database-selection.js';
import { IN_UNIT_OF_WORK, readOnlyWork, unitOfWork } from '../request-context.js';

function assertPerson(req: FastifyRequest): void {
  if (req.ff!.keyHash !== null) throw new AccessError('Web Push subscriptions belong to a signed-in person\'s browser, not an API key');
}

export function registerPushRoutes(app: FastifyInstance, platform: Platform, selector: DatabaseSelector): void {
  app.get('/api/push/key', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => pushKey()));
  app.post('/api/push/subscribe', IN_UNIT_OF_WORK, async (req) => {
    assertPerson(req);
    return { ...(await unitOfWork(req, () => pushSubscribe(req.body)) as object), database: req.ff!.dbName };
  });
  app.post('/api/push/unsubscribe', IN_UNIT_OF_WORK, (req) => {
    assertPerson(req);
    return unitOfWork(req, () => pushUnsubscribe(req.body));
  });
  app.post('/push/renew', async (req, reply) => {
    const dbName = await selector.select(req);
    if ((await readPlatformState((await platform.database(dbName)).executor)).installing) {
      throw new DatabaseBusy(`Database '${dbName}' is installing or upgrading modules; retry shortly`);
    }
    void reply.header('Cache-Control', 'no-store');
    return platform.run(dbName, {}, () => pushRenew(req.body));
  });
}
