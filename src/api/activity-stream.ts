/**
 * The activity feed as the model service offers it (spec §4.10): the routes' bodies checked, then
 * handed to the messaging module's `FkMessageNotifiedContact` (its `unread_count`, `feed` and
 * `mark_read`), which exists only where messaging is installed.
 */
import { BadRequest, NotFound } from '../errors.js';
import { currentEnv } from '../orm/env.js';

const MAX_LIMIT = 200;

export interface FeedQuery {
  unread_only?: boolean;
  limit?: number;
  before_id?: number;
}

export type ReadScope = { model: string; document: number } | { message_id: number } | { all: true } | Record<string, never>;

interface FeedModel {
  unread_count(): Promise<number>;
  feed(query: FeedQuery): Promise<unknown[]>;
  mark_read(scope: ReadScope): Promise<number>;
}

function feedModel(): FeedModel {
  const { registry } = currentEnv();
  if (!registry.has('FkMessageNotifiedContact')) {
    throw new NotFound('The activity stream needs the messaging module, which is not installed in this database');
  }
  return registry.meta('FkMessageNotifiedContact').cls as unknown as FeedModel;
}

export async function unreadCount(): Promise<{ count: number }> {
  return { count: await feedModel().unread_count() };
}

export async function activityFeed(body: unknown): Promise<unknown[]> {
  return feedModel().feed(feedQuery(body));
}

export async function markRead(body: unknown): Promise<{ updated: number }> {
  return { updated: await feedModel().mark_read(readScope(body)) };
}

function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new BadRequest('The body must be a JSON object');
  return body as Record<string, unknown>;
}

const positiveId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;

function feedQuery(body: unknown): FeedQuery {
  const b = objectBody(body);
  const query: FeedQuery = {};
  if (b.unread_only !== undefined) {
    if (typeof b.unread_only !== 'boolean') throw new BadRequest('unread_only must be true or false', { field: 'unread_only' });
    query.unread_only = b.unread_only;
  }
  if (b.limit !== undefined) {
    if (!Number.isSafeInteger(b.limit) || (b.limit as number) < 1 || (b.limit as number) > MAX_LIMIT) {
      throw new BadRequest(`limit must be an integer from 1 to ${MAX_LIMIT}`, { field: 'limit' });
    }
    query.limit = b.limit as number;
  }
  if (b.before_id !== undefined && b.before_id !== null) {
    if (!positiveId(b.before_id)) throw new BadRequest('before_id must be a message id', { field: 'before_id' });
    query.before_id = b.before_id;
  }
  return query;
}

/** One of `{model, document}`, `{message_id}`, `{all: true}`; nothing is no scope (a no-op). */
function readScope(body: unknown): ReadScope {
  const b = objectBody(body);
  const given = ['all', 'message_id', 'model'].filter((k) => b[k] !== undefined && b[k] !== null);
  if (given.length > 1) throw new BadRequest('Send one scope: {model, document}, {message_id} or {all: true}');
  if (b.all !== undefined && b.all !== null) {
    if (b.all !== true) throw new BadRequest('all must be true', { field: 'all' });
    return { all: true };
  }
  if (b.message_id !== undefined && b.message_id !== null) {
    if (!positiveId(b.message_id)) throw new BadRequest('message_id must be a message id', { field: 'message_id' });
    return { message_id: b.message_id };
  }
  if (b.model !== undefined && b.model !== null) {
    if (typeof b.model !== 'string' || !b.model) throw new BadRequest('model must be a model name', { field: 'model' });
    if (!positiveId(b.document)) throw new BadRequest('document must be a record id', { field: 'document' });
    return { model: b.model, document: b.document };
  }
  if (b.document !== undefined) throw new BadRequest('document needs model', { field: 'model' });
  return {};
}
