/**
 * The Web Push outbox (issue 27 item 5). `queuePushes` writes one row per subscription of the
 * recipients in the message's own transaction — one statement whatever the audience — and asks
 * for a drain once that transaction commits (the request never waits for a push service). A drain
 * claims rows (`FOR UPDATE SKIP LOCKED`, then a claim that lapses), sends them outside any
 * transaction, and settles them: sent and refused rows go, a 404/410 (or a 403 to a subscription
 * made with another key) removes the subscription, a retryable failure comes back after a backoff, at most `MAX_ATTEMPTS` times.
 * The recurring drain (`models/index.ts`) sends what a crash between commit and send left behind.
 */
import { currentEnv, sql, withEnv } from 'fieldforge';
import type { Env } from '../../../src/orm/env.js';
import { runInEnv } from '../../../src/orm/env.js';
import { makeEnv } from '../../../src/orm/transaction.js';
import { sendPush, type PushResult } from './send-push.js';
import { vapidKeys } from './vapid-keys.js';

export const DRAIN_BATCH = 500;
export const MAX_ATTEMPTS = 5;
/** How long a drain's claim holds before another drain may take the row (a send times out well before). */
const CLAIM_SECONDS = 60;
const PARALLEL_SENDS = 16;

interface Claimed {
  id: number;
  subscription: number;
  attempts: number;
  payload: Record<string, unknown>;
  endpoint: string;
  p256dh: string;
  auth: string;
  vapid_public_key: string | null;
}

/** Queues `payload` for every push subscription of `userIds`, sent after the current transaction commits. */
export async function queuePushes(userIds: readonly number[], payload: Record<string, unknown>): Promise<void> {
  if (!userIds.length) return;
  const env = currentEnv();
  const { registry, work, uid } = env;
  const outbox = registry.meta('PushOutbox');
  const subscriptions = registry.meta('PushSubscription');
  const o = (f: string) => sql.id(outbox.fields.get(f)!.column!);
  const now = new Date().toISOString();
  const { rows } = await sql<{ id: number }>`INSERT INTO ${sql.table(outbox.table)}
      (${o('subscription')}, ${o('payload')}, ${o('attempts')}, created_date, created_by_id, updated_date, updated_by_id)
    SELECT s.id, ${JSON.stringify({ ...payload, url: recordUrl(payload) })}::jsonb, 0, ${now}::timestamptz, ${uid}::int, ${now}::timestamptz, ${uid}::int
      FROM ${sql.table(subscriptions.table)} s WHERE s.${sql.id(subscriptions.fields.get('user')!.column!)} = ANY(${[...userIds]}::int[])
    RETURNING id`.execute(work.trx);
  if (!rows.length) return;
  const ids = rows.map((r) => r.id);
  work.afterCommit(() => {
    drainQueued(standalone(env), ids).catch((err: unknown) => console.error(`push drain of ${env.db.name} failed`, err));
  });
}

/** Drains the rows one transaction queued, `DRAIN_BATCH` at a time: a large audience is not left to the recurring drain. */
async function drainQueued(env: Env, ids: readonly number[]): Promise<void> {
  for (let from = 0; from < ids.length; from += DRAIN_BATCH) await drainOutbox(env, ids.slice(from, from + DRAIN_BATCH));
}

/** Where a notification click leads: the record's form in the web client. */
export function recordUrl(payload: Record<string, unknown>): string {
  return `/web#model=${encodeURIComponent(String(payload.model ?? ''))}&id=${encodeURIComponent(String(payload.document ?? ''))}`;
}

/** The environment of `env`'s database as the platform, outside any transaction. */
function standalone(env: Env): Env {
  return makeEnv(env.db, env.registry, env.db.executor, { su: true });
}

/** Claims, sends and settles up to `DRAIN_BATCH` rows (`only`: those ids); answers what became of them. */
export async function drainOutbox(env: Env, only?: readonly number[]): Promise<Map<PushResult, number>> {
  const outcome = new Map<PushResult, number>();
  const claimed = await claim(env, only);
  if (!claimed.length) return outcome;
  const keys = await runInEnv(env, () => vapidKeys());
  if (!keys) return outcome;
  const results = new Map<number, PushResult>();
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(PARALLEL_SENDS, claimed.length) }, async () => {
    while (next < claimed.length) {
      const row = claimed[next++]!;
      results.set(row.id, await sendPush(row, row.payload, keys));
    }
  }));
  await settle(env, claimed, results);
  for (const r of results.values()) outcome.set(r, (outcome.get(r) ?? 0) + 1);
  return outcome;
}

async function claim(env: Env, only?: readonly number[]): Promise<Claimed[]> {
  const { registry } = env;
  const outbox = registry.meta('PushOutbox');
  const subscriptions = registry.meta('PushSubscription');
  const o = (f: string) => sql.id(outbox.fields.get(f)!.column!);
  const s = (f: string) => sql.id(subscriptions.fields.get(f)!.column!);
  const { rows } = await sql<Claimed>`WITH claimed AS (
      UPDATE ${sql.table(outbox.table)} o SET ${o('claimed_until')} = now() + make_interval(secs => ${CLAIM_SECONDS}), ${o('attempts')} = o.${o('attempts')} + 1
       WHERE o.id IN (SELECT id FROM ${sql.table(outbox.table)}
                       WHERE (${o('claimed_until')} IS NULL OR ${o('claimed_until')} < now())
                         ${only ? sql`AND id = ANY(${[...only]}::int[])` : sql``}
                       ORDER BY id LIMIT ${DRAIN_BATCH} FOR UPDATE SKIP LOCKED)
      RETURNING o.id, o.${o('subscription')} AS subscription, o.${o('attempts')} AS attempts, o.${o('payload')} AS payload)
    SELECT c.*, s.${s('endpoint')} AS endpoint, s.${s('p256dh')} AS p256dh, s.${s('auth')} AS auth, s.${s('vapid_public_key')} AS vapid_public_key
      FROM claimed c JOIN ${sql.table(subscriptions.table)} s ON s.id = c.subscription ORDER BY c.id`.execute(env.db.executor);
  return rows;
}

/** Sent, refused and exhausted rows go; dead subscriptions go (their rows with them); the rest wait. */
async function settle(env: Env, claimed: readonly Claimed[], results: ReadonlyMap<number, PushResult>): Promise<void> {
  const { registry } = env;
  const outbox = registry.meta('PushOutbox');
  const subscriptions = registry.meta('PushSubscription');
  const o = (f: string) => sql.id(outbox.fields.get(f)!.column!);
  const done = claimed.filter((c) => {
    const r = results.get(c.id);
    return r === 'sent' || r === 'refused' || (r === 'retry' && c.attempts >= MAX_ATTEMPTS);
  }).map((c) => c.id);
  const gone = [...new Set(claimed.filter((c) => results.get(c.id) === 'gone').map((c) => c.subscription))];
  const retry = claimed.filter((c) => results.get(c.id) === 'retry' && c.attempts < MAX_ATTEMPTS);
  await runInEnv(env, () => withEnv({ su: true }, async () => {
    if (done.length) await sql`DELETE FROM ${sql.table(outbox.table)} WHERE id = ANY(${done}::int[])`.execute(env.db.executor);
    if (gone.length) await sql`DELETE FROM ${sql.table(subscriptions.table)} WHERE id = ANY(${gone}::int[])`.execute(env.db.executor);
    if (retry.length) {
      // 30 s, 2 min, 8 min, 32 min: a push service back from an outage gets what it missed.
      await sql`UPDATE ${sql.table(outbox.table)} SET ${o('claimed_until')} = now() + make_interval(secs => 30 * power(4, ${o('attempts')} - 1))
        WHERE id = ANY(${retry.map((c) => c.id)}::int[])`.execute(env.db.executor);
    }
  }));
  const dropped = claimed.filter((c) => results.get(c.id) === 'retry' && c.attempts >= MAX_ATTEMPTS).length;
  if (dropped) console.warn(`push: ${dropped} push(es) of ${env.db.name} dropped after ${MAX_ATTEMPTS} attempts`);
}

/** The recurring drain: whatever is due in this database (leftovers of a crash, retries). */
export async function drainDue(): Promise<void> {
  const env = currentEnv();
  if (!env.registry.has('PushOutbox')) return;
  for (let i = 0; i < 10; i++) {
    const outcome = await drainOutbox(standalone(env));
    if ([...outcome.values()].reduce((a, b) => a + b, 0) < DRAIN_BATCH) return;
  }
}
