/**
 * Renewing a Web Push subscription without a session (odoo PR #275954: a renewal that relied on
 * the session cookie was lost once the session expired, and pushes silently stopped): subscribing
 * answers a renewal token; `POST /push/renew {renewal_token, subscription}`, with no credential at
 * all, re-points the row at the browser's renewed subscription, checked by the SSRF guard as at
 * subscribe, and the next push reaches the renewed subscription, encrypted for its keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { PushSubscription } from '../../modules/messaging/models/push_subscription.js';
import { queuePushes } from '../../modules/messaging/push/outbox.js';
import { openSession } from '../../src/auth/sessions.js';
import { PushEndpoint, type TestSubscription } from '../support/push-endpoint.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let push: PushEndpoint;

interface Person {
  uid: number;
  token: string;
}

async function person(name: string): Promise<Person> {
  return t.run(async () => {
    const groups = await Group.query({ identifier__in: ['core.group_user'] }).ids();
    const user = await User.create({ name, email: `${name.toLowerCase().replace(/\W/g, '')}@renew.test`, groups });
    return { uid: user.id, token: (await openSession(user.id, { dbName: t.name, secret: t.platform.secret, sessionHours: 8 })).access_token };
  });
}

async function subscribe(p: Person, subscription: TestSubscription): Promise<{ subscribed: true; renewal_token: string; database: string }> {
  const res = await t.api('POST', '/api/push/subscribe', { subscription }, { authorization: `Bearer ${p.token}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The renewal as the service worker sends it: no Authorization header, no cookie. */
const renew = (body: unknown, db = t.name) => t.app.inject({
  method: 'POST', url: '/push/renew', headers: { 'content-type': 'application/json', 'x-db-name': db }, payload: JSON.stringify(body),
});

const rowsOf = (uid: number) => t.run(async () => (await PushSubscription.query({ user: uid }).read(['endpoint'])).map((r) => r.endpoint));

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

describe('renewing a subscription', () => {
  it('subscribing answers a renewal token and the database; /push/renew with it alone re-points the row, and the next push reaches the renewed subscription', async () => {
    const p = await person('Renewing Person');
    const old = push.subscription('before');
    const answer = await subscribe(p, old);
    expect(answer).toEqual({ subscribed: true, renewal_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), database: t.name });
    const renewed = push.subscription('after');
    const res = await renew({ renewal_token: answer.renewal_token, subscription: renewed });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ renewed: true });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await rowsOf(p.uid)).toEqual([renewed.endpoint]);
    await t.run(() => queuePushes([p.uid], { kind: 'message', model: 'ProjectTask', document: 1, message_id: 1, title: 'T', body: 'after renewal' }));
    const [got] = await push.waitFor(1);
    expect(got).toMatchObject({ endpoint: renewed.endpoint, payload: { body: 'after renewal' } });
    // The token stays valid for the next renewal.
    const again = push.subscription('again');
    expect((await renew({ renewal_token: answer.renewal_token, subscription: again })).statusCode).toBe(200);
    expect(await rowsOf(p.uid)).toEqual([again.endpoint]);
  });

  it('refuses an unknown or malformed token, a bad subscription and an endpoint the guard refuses; the row stays as it was', async () => {
    const p = await person('Refused Renewal');
    const sub = push.subscription('kept');
    const { renewal_token } = await subscribe(p, sub);
    const other = push.subscription('other');
    const cases: [unknown, number, string][] = [
      [{ renewal_token: 'A'.repeat(43), subscription: other }, 404, 'NotFound'],
      [{ renewal_token: 'short', subscription: other }, 400, 'BadRequest'],
      [{ subscription: other }, 400, 'BadRequest'],
      [{ renewal_token, subscription: { endpoint: other.endpoint } }, 400, 'BadRequest'],
      [{ renewal_token, subscription: { ...other, endpoint: 'https://127.0.0.1/push/x' } }, 400, 'BadRequest'],
      [{ renewal_token, subscription: { ...other, endpoint: other.endpoint.replace('127.0.0.1', 'localhost') } }, 400, 'BadRequest'],
      [[renewal_token], 400, 'BadRequest'],
    ];
    for (const [body, status, error] of cases) {
      const res = await renew(body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(status);
      expect(res.json()).toMatchObject({ error });
    }
    expect(await rowsOf(p.uid)).toEqual([sub.endpoint]);
    expect((await renew({ renewal_token, subscription: other }, 'fft_no_such_db')).statusCode).toBe(404);
  });

  it('subscribing again hands out a new token and the old one stops working; an archived user\'s token renews nothing', async () => {
    const p = await person('Rotating Person');
    const sub = push.subscription('rotating');
    const first = await subscribe(p, sub);
    const second = await subscribe(p, sub);
    expect(second.renewal_token).not.toBe(first.renewal_token);
    expect((await renew({ renewal_token: first.renewal_token, subscription: push.subscription('x') })).statusCode).toBe(404);
    await t.run(() => User.query({ id: p.uid }).update({ active: false }));
    expect((await renew({ renewal_token: second.renewal_token, subscription: push.subscription('y') })).statusCode).toBe(404);
    expect(await rowsOf(p.uid)).toEqual([sub.endpoint]);
  });

  it('a renewed endpoint the page had already subscribed again is one row, the token\'s', async () => {
    const p = await person('Raced Renewal');
    const { renewal_token } = await subscribe(p, push.subscription('raced-old'));
    const renewed = push.subscription('raced-new');
    await subscribe(p, renewed); // the page re-synced the renewed subscription first
    expect((await rowsOf(p.uid)).sort()).toHaveLength(2);
    expect((await renew({ renewal_token, subscription: renewed })).statusCode).toBe(200);
    expect(await rowsOf(p.uid)).toEqual([renewed.endpoint]);
  });
});
