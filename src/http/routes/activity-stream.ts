/**
 * The activity feed's routes (spec §4.10, CONTRACTS C5 "Routes"): the unread count, the feed, and
 * marking read. Reading works with any credential (an API key reads its service account's feed);
 * marking read is a person's act and needs a signed-in session (an API key → 403).
 */
import type { FastifyInstance } from 'fastify';
import { AccessError } from '../../errors.js';
import { activityFeed, markRead, unreadCount } from '../../api/activity-stream.js';
import { IN_UNIT_OF_WORK, readOnlyWork, unitOfWork } from '../request-context.js';

export function registerActivityStreamRoutes(app: FastifyInstance): void {
  app.get('/api/activity-stream/unread-count', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => unreadCount()));
  app.post('/api/activity-stream', IN_UNIT_OF_WORK, (req) => readOnlyWork(req, () => activityFeed(req.body)));
  app.post('/api/activity-stream/read', IN_UNIT_OF_WORK, (req) => {
    if (req.ff!.keyHash !== null) throw new AccessError('Marking messages read needs a signed-in session, not an API key');
    return unitOfWork(req, () => markRead(req.body));
  });
}
