/**
 * Pushing frames to a user's sockets from server code (CONTRACTS C4 "Sending from module code").
 * Each push is queued on the current unit of work and published once its transaction commits —
 * a rolled-back write, or a savepoint rolled back (an import row refused), pushes nothing — or at
 * once outside a transaction (a read-only request, a
 * script). Publishing is fire-and-forget: the commit never waits for it and never fails by it.
 * The database is the current environment's, so a push cannot reach another database's sockets.
 *
 * ```ts
 * import { send_notification } from 'fieldforge';
 * send_notification(order.salesperson_id, { title: 'Order confirmed', message: order.name, icon: 'check' });
 * ```
 */
import { currentEnv, type Env } from '../orm/env.js';
import type { ServerFrame, VisitorFrame } from './bus.js';

/** A plain toast (spec §6.1). */
export interface NotificationPayload {
  title: string;
  message: string;
  icon?: string;
}

/** Shows a toast on every socket of `user_id` once the current transaction commits. */
export function send_notification(user_id: number, notification: NotificationPayload): void {
  const { title, message, icon } = notification ?? ({} as NotificationPayload);
  if (typeof title !== 'string' || typeof message !== 'string' || (icon !== undefined && typeof icon !== 'string')) {
    throw new TypeError('send_notification(user_id, {title, message, icon?}): title and message must be strings');
  }
  afterCommit(user_id, { type: 'notification', data: icon === undefined ? { title, message } : { title, message, icon } });
}

/**
 * Sends an in-app notification frame (`activity_update`, spec §6.1) to every socket of `user_id`
 * once the current transaction commits; `kind` is `message` unless the payload says otherwise.
 */
export function send_activity_update(user_id: number, payload: Record<string, unknown>): void {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new TypeError('send_activity_update(user_id, payload): payload must be an object');
  }
  afterCommit(user_id, { type: 'activity_update', data: { kind: 'message', ...payload } });
}

/**
 * `send_activity_update` to many users at once: one bus message after commit, however many users
 * (a message's audience of a thousand followers is one publish, not a thousand).
 */
export function send_activity_updates(user_ids: readonly number[], payload: Record<string, unknown>): void {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new TypeError('send_activity_updates(user_ids, payload): payload must be an object');
  }
  const users = [...new Set(user_ids.map(checkedUser))];
  if (!users.length) return;
  const env = currentEnv();
  const frame: ServerFrame = { type: 'activity_update', data: { kind: 'message', ...payload } };
  env.work.afterCommit(() => env.ports.bus?.publish({ db: env.db.name, to: { users }, frame }));
}

/**
 * Sends `{type: 'realtime_data', data: {event, ...data}}` to every socket of `user_id` once the
 * current transaction commits — client actions are `send_realtime(uid, 'client_action', {action})`.
 */
export function send_realtime(user_id: number, event: string, data: Record<string, unknown> = {}): void {
  if (typeof event !== 'string' || !event) throw new TypeError('send_realtime(user_id, event, data): event must be a non-empty string');
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new TypeError('send_realtime(user_id, event, data): data must be an object');
  afterCommit(user_id, { type: 'realtime_data', data: { ...data, event } });
}

/**
 * Sends an `activity_update` frame to every socket watching record `id` of `model` (an open form),
 * except the sockets of `except_users`, once the current transaction commits: a message on a
 * record reaches its viewers who do not follow it as `record_message` (spec §6.1).
 */
export function send_record_viewers(model: string, id: number, payload: Record<string, unknown>, except_users: readonly number[] = []): void {
  if (typeof model !== 'string' || !model) throw new TypeError('send_record_viewers(model, id, payload): model must be a model name');
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw new TypeError('send_record_viewers(model, id, payload): payload must be an object');
  const env = currentEnv();
  const record = { model, id: checkedId(id) };
  const exceptUsers = [...except_users];
  env.work.afterCommit(() => env.ports.bus?.publish({
    db: env.db.name, to: { viewersOf: record, exceptUsers }, frame: { type: 'activity_update', data: { kind: 'record_message', ...payload } },
  }));
}

/**
 * Sends `frame` to every visitor socket of live-chat session `session_id` (spec §6.4), on any
 * worker, once the current transaction commits (the live-chat module's, `modules/livechat`).
 */
export function send_livechat_visitor(session_id: number, frame: VisitorFrame): void {
  if (frame === null || typeof frame !== 'object' || (frame.type !== 'message' && frame.type !== 'closed')) {
    throw new TypeError("send_livechat_visitor(session_id, frame): frame.type must be 'message' or 'closed'");
  }
  const env = currentEnv();
  const to = { visitorsOf: checkedId(session_id) };
  env.work.afterCommit(() => env.ports.bus?.publish({ db: env.db.name, to, frame }));
}

function afterCommit(user_id: number, frame: ServerFrame): void {
  const env = currentEnv();
  const uid = checkedUser(user_id);
  env.work.afterCommit(() => publish(env, uid, frame));
}

/** Not awaited by anyone: the bus delivers later and logs its own failures. */
function publish(env: Env, uid: number, frame: ServerFrame): void {
  env.ports.bus?.publish({ db: env.db.name, to: { user: uid }, frame });
}

function checkedUser(user_id: unknown): number {
  if (!Number.isSafeInteger(user_id) || (user_id as number) <= 0) throw new TypeError(`user_id must be a User id, got ${String(user_id)}`);
  return user_id as number;
}

function checkedId(id: unknown): number {
  if (!Number.isSafeInteger(id) || (id as number) <= 0) throw new TypeError(`id must be a record id, got ${String(id)}`);
  return id as number;
}
