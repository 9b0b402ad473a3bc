/**
 * Web Push end to end (issue 27 item 5, CONTRACTS C5): the database's key, subscribing with the
 * SSRF guard, and pushes to a real local push service that decrypts them by hand (RFC 8291) and
 * verifies their VAPID signature (RFC 8292) — sent after commit from the durable outbox, never
 * for a rolled-back message nor to an `inbox` person, a 404/410 removing the subscription, a 500
 * retried later, and rows a crash left behind sent once by the recurring drain, even by two drains
 * racing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { User } from '../../modules/core/models/user.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { Message } from '../../modules/messaging/models/message.js';
import { PushOutbox } from '../../modules/messaging/models/push_outbox.js';
import { PushSubscription } from '../../modules/messaging/models/push_subscription.js';
import { addFollowers } from '../../modules/messaging/thread/follow.js';
import { assertPushEndpoint } from '../../modules/messaging/push/endpoint-guard.js';
import { RecurringJobs } from '../../src/platform/recurring-jobs.js';
import { currentEnv } from '../../src/orm/env.js';
import { sql } from '../../src/db/sql-fragment.js';
import { PushEndpoint, type TestSubscription } from '../support/push-endpoint.js';
import { messagingPerson, type MessagingPerson } from '../support/messaging-person.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let push: PushEndpoint;

type Person = MessagingPerson;
const person = (name: string): Promise<Person> => messagingPerson(t, name);

const as = (p: Person) => ({ authorization: `Bearer ${p.token}` });
const subscribe = (p: Person, subscription: unknown) => t.api('POST', '/api/push/subscribe', { subscription }, as(p));

async function subscribed(p: Person, name: string): Promise<TestSubscription> {
  const sub = push.subscription(name);
  const res = await subscribe(p, sub);
  expect(res.statusCode, res.body).toBe(200);
  return sub;
}

async function messageTo(p: Person, content: string): Promise<number> {
  return t.run(async () => {
    const task = await ProjectTask.create({ name: `Push ${content}` });
    await addFollowers('ProjectTask', [{ document: task.id, contact: p.contact }]);
    await Message.create_message({ model: 'ProjectTask', document: task.id, content, author: null });
    return task.id;
  });
}

const outboxRows = () => t.run(() => PushOutbox.query().count());

beforeAll(async () => {
  push = await PushEndpoint.start();
  process.env.FF_PUSH_ALLOWED_ORIGINS = push.origin;
  t = await testDatabase('full');
});
afterAll(async () => {
  delete process.env.FF_PUSH_ALLOWED_ORIGINS;
  await t?.close();
  await push?.stop();
});

describe('the key and subscribing', () => {
  it('GET /api/push/key answers the database key (a P-256 public key); subscribing needs a person, not an API key', async () => {
    const res = await t.api('GET', '/api/push/key');
    expect(res.statusCode).toBe(200);
    expect(Buffer.from(res.json().public_key, 'base64url')).toHaveLength(65);
    const byKey = await t.api('POST', '/api/push/subscribe', { subscription: push.subscription('key') });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json()).toMatchObject({ error: 'AccessError' });
  });

  it('refuses bad subscriptions and endpoints the guard does not allow, with a 400 naming the subscription', async () => {
    const p = await person('Guarded Person');
    const good = push.subscription('guarded');
    for (const subscription of [
      null, { endpoint: good.endpoint }, { ...good, keys: { p256dh: 'short', auth: good.keys.auth } }, { ...good, keys: { p256dh: good.keys.p256dh, auth: 'x' } },
      { ...good, endpoint: 'http://push.example.com/x' }, { ...good, endpoint: 'https://127.0.0.1/x' }, { ...good, endpoint: 'https://localhost/x' },
      { ...good, endpoint: 'https://10.1.2.3/x' }, { ...good, endpoint: 'https://[::1]/x' }, { ...good, endpoint: 'https://169.254.169.254/latest' },
      { ...good, endpoint: good.endpoint.replace('127.0.0.1', 'localhost') }, { ...good, endpoint: 'javascript:alert(1)' },
    ]) {
      const res = await subscribe(p, subscription);
      expect(res.statusCode, `${JSON.stringify(subscription)}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({ error: 'BadRequest', field: 'subscription' });
    }
    expect(await t.run(() => PushSubscription.query({ user: p.uid }).count())).toBe(0);
    expect((await subscribe(p, good)).statusCode).toBe(200);
    // The same endpoint again (a renewed subscription) is still one row.
    expect((await subscribe(p, good)).statusCode).toBe(200);
    expect(await t.run(() => PushSubscription.query({ user: p.uid }).count())).toBe(1);
    const off = await t.api('POST', '/api/push/unsubscribe', { endpoint: good.endpoint }, as(p));
    expect(off.json()).toEqual({ unsubscribed: 1 });
  });

  it('a public https endpoint passes the guard; private ones, IPv4-mapped ones included, do not', async () => {
    await expect(assertPushEndpoint('https://93.184.215.14/push/abc')).resolves.toBeInstanceOf(URL);
    await expect(assertPushEndpoint('https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/push')).resolves.toBeInstanceOf(URL);
    for (const endpoint of ['https://[::ffff:10.0.0.1]/x', 'https://[::ffff:127.0.0.1]/x', 'https://[fd00::1]/x', 'https://[fe80::1]/x', 'https://100.64.0.1/x']) {
      await expect(assertPushEndpoint(endpoint), endpoint).rejects.toMatchObject({ field: 'subscription' });
    }
  });
});

describe('pushes', () => {
  it('a message pushes once, after commit, to each subscription of a realtime follower: decrypted, VAPID-signed, with a TTL', async () => {
    const p = await person('Pushed Person');
    const [phone, laptop] = [await subscribed(p, 'phone'), await subscribed(p, 'laptop')];
    const before = push.received.length;
    const task = await messageTo(p, '<p>Deploy &amp; relax</p>');
    await push.waitFor(before + 2, 5_000);
    const mine = push.received.slice(before).filter((r) => [phone.endpoint, laptop.endpoint].includes(r.endpoint));
    expect(mine).toHaveLength(2);
    for (const r of mine) {
      expect(r.payload).toMatchObject({ kind: 'message', model: 'ProjectTask', document: task, body: 'Deploy & relax', url: `/web#model=ProjectTask&id=${task}` });
      expect(r.ttl).toBe(86_400);
      expect(r.jwt.aud).toBe(push.origin);
      expect(r.vapidPublicKey).toBe((await t.api('GET', '/api/push/key')).json().public_key);
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(await outboxRows()).toBe(0);
  });

  it('a rolled-back message pushes nothing and leaves no outbox row; an inbox person gets no push', async () => {
    const p = await person('Rolled Person');
    const sub = await subscribed(p, 'rolled');
    const inbox = await person('Inbox Person');
    const inboxSub = await subscribed(inbox, 'inbox');
    await t.run(() => User.query({ id: inbox.uid }).update({ notification_preference: 'inbox' }));
    await t.failure(async () => {
      const task = await ProjectTask.create({ name: 'Rolled back' });
      await addFollowers('ProjectTask', [{ document: task.id, contact: p.contact }]);
      await Message.create_message({ model: 'ProjectTask', document: task.id, content: 'never', author: null });
      expect(await PushOutbox.query().count()).toBeGreaterThan(0);
      throw new Error('rolled back');
    });
    await messageTo(inbox, 'inbox only');
    // The marker is queued after both: once it has arrived, nothing else for them is on its way.
    await messageTo(p, 'marker');
    const forP = () => push.received.filter((r) => r.endpoint === sub.endpoint).map((r) => (r.payload as { body: string }).body);
    await expect.poll(forP, { timeout: 5_000 }).toContain('marker');
    expect(forP()).toEqual(['marker']);
    expect(push.received.filter((r) => r.endpoint === inboxSub.endpoint)).toEqual([]);
  });

  it('a 410 from the push service removes the subscription; a 500 keeps the row for a retry later', async () => {
    const p = await person('Gone Person');
    const gone = await subscribed(p, 'gone');
    const flaky = await subscribed(p, 'flaky');
    push.answer(gone.endpoint, 410);
    push.answer(flaky.endpoint, 500);
    await messageTo(p, 'to the dead and the flaky');
    await expect.poll(() => t.run(() => PushSubscription.query({ endpoint: gone.endpoint }).count()), { timeout: 5_000 }).toBe(0);
    await expect.poll(() => t.run(async () => (await PushOutbox.query().read(['attempts', 'claimed_until'])).map((r) => r.attempts)), { timeout: 5_000 }).toEqual([1]);
    const [row] = await t.run(() => PushOutbox.query().read(['claimed_until']));
    expect(new Date(row!.claimed_until as string).getTime()).toBeGreaterThan(Date.now() + 10_000);
    await t.run(() => PushSubscription.query({ endpoint: flaky.endpoint }).delete());
  });

  it('rows a crash left behind (committed, never drained) are sent by the recurring drain exactly once, even by two drains at once', async () => {
    const p = await person('Crash Person');
    const sub = await subscribed(p, 'crash');
    // What queuePushes writes, committed without its after-commit drain: the process "died".
    await t.run(async () => {
      const { registry, work } = currentEnv();
      const outbox = registry.meta('PushOutbox');
      const [s] = await PushSubscription.query({ endpoint: sub.endpoint }).ids();
      for (let i = 0; i < 3; i++) {
        await sql`INSERT INTO ${sql.table(outbox.table)} (subscription_id, payload, attempts, created_date, updated_date)
          VALUES (${s}, ${JSON.stringify({ kind: 'message', title: 'Left', body: `left ${i}` })}::jsonb, 0, now(), now())`.execute(work.trx);
      }
    });
    const before = push.received.filter((r) => r.endpoint === sub.endpoint).length;
    expect(before).toBe(0);
    // Two workers' drains at once (two runners over one database).
    await Promise.all([t.platform.recurringJobs.tick(Date.now() + 60_000), new RecurringJobs(t.platform).tick(Date.now() + 60_000)]);
    await expect.poll(() => push.received.filter((r) => r.endpoint === sub.endpoint).length, { timeout: 5_000 }).toBe(3);
    await new Promise((r) => setTimeout(r, 300));
    const bodies = push.received.filter((r) => r.endpoint === sub.endpoint).map((r) => (r.payload as { body: string }).body).sort();
    expect(bodies).toEqual(['left 0', 'left 1', 'left 2']);
    expect(await outboxRows()).toBe(0);
  });
});
