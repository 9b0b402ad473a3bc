/**
 * The Web Push outbox against a real local push service (issue 27 item 5), beyond
 * push-delivery.test.ts: a slow push service never delays the message's unit of work (the drain
 * runs after commit, not awaited); a 403 removes the subscription only when it was made with
 * another key than the database's, and keeps (retries) one made with the database's own key; an
 * audience over one drain batch is all sent after commit; `queuePushes` is one statement whatever
 * the number of users and subscriptions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webpush from 'web-push';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { Message } from '../../modules/messaging/models/message.js';
import { PushOutbox } from '../../modules/messaging/models/push_outbox.js';
import { PushSubscription } from '../../modules/messaging/models/push_subscription.js';
import { addFollowers } from '../../modules/messaging/thread/follow.js';
import { DRAIN_BATCH, queuePushes } from '../../modules/messaging/push/outbox.js';
import { PushEndpoint, type TestSubscription } from '../support/push-endpoint.js';
import { messagingPerson, type MessagingPerson } from '../support/messaging-person.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let push: PushEndpoint;
let databaseKey: string;

type Person = MessagingPerson;
const person = (name: string): Promise<Person> => messagingPerson(t, name);

async function subscribed(p: Person, sub: TestSubscription): Promise<TestSubscription> {
  const res = await t.api('POST', '/api/push/subscribe', { subscription: sub }, { authorization: `Bearer ${p.token}` });
  expect(res.statusCode, res.body).toBe(200);
  return sub;
}

/** A message on a new task `p` follows, posted in one unit of work; answers how long that unit took. */
async function messageTo(p: Person, content: string): Promise<number> {
  const started = performance.now();
  await t.run(async () => {
    const task = await ProjectTask.create({ name: `Outbox ${content}` });
    await addFollowers('ProjectTask', [{ document: task.id, contact: p.contact }]);
    await Message.create_message({ model: 'ProjectTask', document: task.id, content, author: null });
  });
  return performance.now() - started;
}

const subscriptionsAt = (endpoint: string) => t.run(() => PushSubscription.query({ endpoint }).count());
const outboxOf = (endpoint: string) => t.run(async () => {
  const [sub] = await PushSubscription.query({ endpoint }).ids();
  return sub === undefined ? [] : PushOutbox.query({ subscription: sub }).read(['attempts', 'claimed_until']);
});

beforeAll(async () => {
  push = await PushEndpoint.start();
  process.env.FF_PUSH_ALLOWED_ORIGINS = push.origin;
  t = await testDatabase('full');
  databaseKey = (await t.api('GET', '/api/push/key')).json().public_key;
});
afterAll(async () => {
  delete process.env.FF_PUSH_ALLOWED_ORIGINS;
  await t?.close();
  await push?.stop();
});

describe('the outbox', () => {
  it('a slow push service does not delay the message: its unit of work commits, the push arrives later', async () => {
    const p = await person('Slow Service');
    const sub = await subscribed(p, push.subscription('slow'));
    push.delay(1_500, sub);
    const ms = await messageTo(p, 'not kept waiting');
    expect(ms).toBeLessThan(1_000);
    expect(push.received.filter((r) => r.endpoint === sub.endpoint)).toEqual([]);
    await expect.poll(() => push.received.filter((r) => r.endpoint === sub.endpoint).length, { timeout: 5_000 }).toBe(1);
    await expect.poll(() => outboxOf(sub.endpoint), { timeout: 2_000 }).toEqual([]);
  });

  it('a 403 removes a subscription made with another key; one made with the database key is kept and its push retried', async () => {
    const p = await person('Forbidden Person');
    const otherKey = webpush.generateVAPIDKeys().publicKey;
    // Subscribed elsewhere with another key, its row copied here: the push service refuses our signature.
    const foreign = await subscribed(p, push.subscription('foreign', { applicationServerKey: otherKey }));
    await t.run(() => PushSubscription.query({ endpoint: foreign.endpoint }).update({ vapid_public_key: otherKey }));
    // Subscribed with this database's key, refused all the same (a clock, a subject): not a dead subscription.
    const ours = await subscribed(p, push.subscription('ours', { applicationServerKey: databaseKey }));
    push.answer(ours, 403);
    await messageTo(p, 'forbidden');
    await expect.poll(() => subscriptionsAt(foreign.endpoint), { timeout: 5_000 }).toBe(0);
    await expect.poll(async () => (await outboxOf(ours.endpoint)).map((r) => r.attempts), { timeout: 5_000 }).toEqual([1]);
    expect(await subscriptionsAt(ours.endpoint)).toBe(1);
    expect(push.rejected.filter((r) => r.endpoint === foreign.endpoint).map((r) => r.status)).toEqual([403]);
  });

  it('an audience larger than one drain batch is all sent by the after-commit drain, not left to the recurring one', async () => {
    const p = await person('Large Audience');
    const subs = Array.from({ length: DRAIN_BATCH + 100 }, (_, i) => push.subscription(`large${i}`));
    await t.run(() => PushSubscription.create_many(subs.map((sub) => ({ user: p.uid, endpoint: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth, vapid_public_key: databaseKey }))));
    const mine = () => push.received.filter((r) => (r.payload as { body?: string }).body === 'to many').length;
    await t.run(() => queuePushes([p.uid], { kind: 'message', model: 'ProjectTask', document: 1, message_id: 1, title: 'Many', body: 'to many' }));
    await expect.poll(mine, { timeout: 20_000, interval: 200 }).toBe(subs.length);
    await t.run(() => PushSubscription.query({ user: p.uid }).delete());
  });

  it('queuePushes is one statement for 1 user or 60 users with 2 subscriptions each, and queues a row per subscription', async () => {
    const people = await Promise.all(Array.from({ length: 60 }, (_, i) => person(`Queue ${i}`)));
    for (const p of people) await t.run(() => PushSubscription.create_many([1, 2].map((n) => ({ user: p.uid, endpoint: `${push.origin}/push/none-${p.uid}-${n}`, p256dh: 'k', auth: 'a', vapid_public_key: databaseKey }))));
    const payload = { kind: 'message', model: 'ProjectTask', document: 1, message_id: 1, title: 'Q', body: 'q' };
    const counted = async (uids: number[]) => {
      let rows = 0;
      let statements: string[] = [];
      await t.failure(async () => {
        const before = await PushOutbox.query().count();
        ({ statements } = await t.countStatements(() => queuePushes(uids, payload)));
        rows = (await PushOutbox.query().count()) - before;
        throw new Error('rolled back: nothing is sent');
      });
      return { statements: statements.length, rows };
    };
    expect(await counted([people[0]!.uid])).toEqual({ statements: 1, rows: 2 });
    expect(await counted(people.map((p) => p.uid))).toEqual({ statements: 1, rows: 120 });
  });
});
