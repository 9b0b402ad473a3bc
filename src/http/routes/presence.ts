/**
 * `GET /api/chat/presence` (spec §4.10, §6.2): the ids of the users online in the database right
 * now, as a bare array — what a client seeds its presence dots with before the socket's
 * `presence` frames keep them current.
 */
import type { FastifyInstance } from 'fastify';
import { RealtimeUnavailable } from '../../errors.js';
import type { PresenceStore } from '../../realtime/bus.js';
import { IN_UNIT_OF_WORK, readOnlyWork } from '../request-context.js';

export function registerPresenceRoutes(app: FastifyInstance, presence: PresenceStore): void {
  app.get('/api/chat/presence', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, async () => {
    try {
      return await presence.online(req.ff!.dbName);
    } catch (err) {
      throw new RealtimeUnavailable(`Presence cannot be read right now (${(err as Error).name}); retry shortly`);
    }
  }));
}
