/**
 * The test push service (test/support/push-endpoint.ts) against web-push as the sender, over real
 * HTTP: it decrypts what web-push encrypted, records TTL, urgency, topic and the VAPID claims, and
 * refuses — without recording a delivery — a tampered body, a token signed by another key, for
 * another audience, too long-lived or without a contact, a missing TTL, another encoding and an
 * oversized body; it answers what the test scripted (410, 429 once, 404, 500), slowly if asked.
 */
import { importJWK, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import webpush, { type RequestDetails, type RequestOptions } from 'web-push';
import { PushEndpoint, type TestSubscription } from '../support/push-endpoint.js';

const SUBJECT = 'mailto:test@fieldforge.invalid';
const vapid = webpush.generateVAPIDKeys();
const other = webpush.generateVAPIDKeys();
let push: PushEndpoint;

beforeAll(async () => {
  push = await PushEndpoint.start();
});
afterAll(async () => {
  await push.stop();
});
beforeEach(() => push.clear());

function details(sub: TestSubscription, payload: unknown, options: RequestOptions = {}): RequestDetails & { body: Buffer } {
  return webpush.generateRequestDetails(sub, JSON.stringify(payload), {
    vapidDetails: { subject: SUBJECT, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
    TTL: 3600,
    urgency: 'high',
    contentEncoding: 'aes128gcm',
    ...options,
  });
}

/** Sends the request web-push prepared, as its sendNotification would, with fetch. */
async function send(request: RequestDetails, changes: { headers?: Record<string, string | null>; body?: Buffer } = {}): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries({ ...request.headers, ...changes.headers })) {
    if (value !== null && value !== undefined && name.toLowerCase() !== 'content-length') headers.set(name, String(value));
  }
  return fetch(request.endpoint, { method: 'POST', headers, body: changes.body ?? request.body });
}

/** A `vapid` Authorization header with a JWT signed by `keys` (web-push's pair) carrying `claims`. */
async function vapidHeader(keys: { publicKey: string; privateKey: string }, claims: JWTPayload): Promise<string> {
  const raw = Buffer.from(keys.publicKey, 'base64url');
  const key = await importJWK(
    { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url'), d: keys.privateKey },
    'ES256',
  );
  const jwt = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(key);
  return `vapid t=${jwt}, k=${keys.publicKey}`;
}

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

describe('a push web-push sent', () => {
  it('is decrypted to what was sent, with its TTL, urgency, topic and verified VAPID claims', async () => {
    const sub = push.subscription('ada');
    const payload = { type: 'message', title: 'New message on T-42', body: 'Ada: ready for review', url: '/web/task/42' };
    const request = details(sub, payload, { topic: 'task-42' });
    const res = await send(request);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toMatch(new RegExp(`^${push.origin}/message/\\d+$`));
    const [got] = await push.waitFor(1);
    expect(got!.payload).toEqual(payload);
    expect(got!.text).toBe(JSON.stringify(payload));
    expect(got).toMatchObject({ endpoint: sub.endpoint, ttl: 3600, urgency: 'high', topic: 'task-42', contentEncoding: 'aes128gcm', status: 201 });
    expect(got!.jwt.aud).toBe(push.origin);
    expect(got!.jwt.sub).toBe(SUBJECT);
    const now = Date.now() / 1000;
    expect(got!.jwt.exp).toBeGreaterThan(now);
    expect(got!.jwt.exp).toBeLessThanOrEqual(now + 24 * 3600);
    expect(got!.vapidPublicKey).toBe(vapid.publicKey);
    expect(got!.bodyBytes).toBe(request.body.length);
    expect(push.rejected).toEqual([]);
  });

  it('hands out subscriptions shaped as the browser’s, each its own keys', () => {
    const a = push.subscription('same');
    const b = push.subscription('same');
    expect(a.endpoint).toMatch(new RegExp(`^${push.origin}/push/same-\\d+$`));
    expect(a.endpoint).not.toBe(b.endpoint);
    expect(Buffer.from(a.keys.p256dh, 'base64url')).toHaveLength(65);
    expect(Buffer.from(a.keys.p256dh, 'base64url')[0]).toBe(0x04);
    expect(Buffer.from(a.keys.auth, 'base64url')).toHaveLength(16);
    expect(a.keys.p256dh).not.toBe(b.keys.p256dh);
    expect(a.expirationTime).toBeNull();
  });

  it('round-trips unicode text', async () => {
    const sub = push.subscription('unicode');
    const payload = { title: 'Zoë · Дмитрий · 田中 · مرحبا', body: '🚀 e\u0301 — 👩‍👩‍👧 \u{1F1EB}\u{1F1F7}', n: 1 };
    expect((await send(details(sub, payload))).status).toBe(201);
    const [got] = await push.waitFor(1);
    expect(got!.payload).toEqual(payload);
  });

  it('keeps a text that is not JSON as text, and no Urgency as null', async () => {
    const sub = push.subscription('plain');
    const request = webpush.generateRequestDetails(sub, 'just words', {
      vapidDetails: { subject: SUBJECT, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
      contentEncoding: 'aes128gcm',
    });
    expect((await send(request, { headers: { Urgency: null } })).status).toBe(201);
    const [got] = await push.waitFor(1);
    expect(got).toMatchObject({ text: 'just words', payload: undefined, urgency: null, topic: null, ttl: 2419200 });
  });
});

describe('a push that fails a check is refused and not received', () => {
  async function refused(res: Response, status: number, reason: RegExp): Promise<void> {
    expect(res.status).toBe(status);
    expect(push.received).toEqual([]);
    expect(push.rejected).toHaveLength(1);
    expect(push.rejected[0]!.status).toBe(status);
    expect(push.rejected[0]!.reason).toMatch(reason);
  }

  it('a body with one byte flipped in the ciphertext', async () => {
    const request = details(push.subscription('tamper'), { hello: 'world' });
    const body = Buffer.from(request.body);
    body[body.length - 20]! ^= 0x01;
    await refused(await send(request, { body }), 400, /decryption failed/);
    // The untouched body of the same request is accepted: the refusal was the flipped byte's.
    expect((await send(request)).status).toBe(201);
    expect(await push.waitFor(1)).toHaveLength(1);
  });

  it('a body with one byte flipped in the salt', async () => {
    const request = details(push.subscription('salt'), { hello: 'world' });
    const body = Buffer.from(request.body);
    body[3]! ^= 0x80;
    await refused(await send(request, { body }), 400, /decryption failed/);
  });

  it('a body encrypted for another subscription', async () => {
    const request = details(push.subscription('meant'), { secret: 1 });
    const elsewhere = push.subscription('elsewhere');
    await refused(await send({ ...request, endpoint: elsewhere.endpoint }), 400, /decryption failed/);
  });

  it('a JWT signed by another key than the one in k', async () => {
    const request = details(push.subscription('forged'), { hi: 1 });
    const forged = (await vapidHeader(other, { aud: push.origin, exp: inAnHour(), sub: SUBJECT })).replace(other.publicKey, vapid.publicKey);
    await refused(await send(request, { headers: { Authorization: forged } }), 401, /signature verification failed/);
  });

  it('another application server’s key on a subscription made with ours', async () => {
    const sub = push.subscription('restricted', { applicationServerKey: vapid.publicKey });
    const request = webpush.generateRequestDetails(sub, '{"hi":1}', {
      vapidDetails: { subject: SUBJECT, publicKey: other.publicKey, privateKey: other.privateKey },
      contentEncoding: 'aes128gcm',
    });
    await refused(await send(request), 403, /applicationServerKey/);
    push.clear();
    expect((await send(details(sub, { hi: 1 }))).status).toBe(201);
  });

  it('a JWT for another audience', async () => {
    const request = details(push.subscription('aud'), { hi: 1 });
    const wrong = webpush.getVapidHeaders('http://127.0.0.1:1', SUBJECT, vapid.publicKey, vapid.privateKey, 'aes128gcm');
    await refused(await send(request, { headers: { Authorization: wrong.Authorization } }), 401, /unexpected "aud" claim value/);
  });

  it('a JWT already expired', async () => {
    const request = details(push.subscription('expired'), { hi: 1 });
    const header = await vapidHeader(vapid, { aud: push.origin, exp: Math.floor(Date.now() / 1000) - 60, sub: SUBJECT });
    await refused(await send(request, { headers: { Authorization: header } }), 401, /"exp" claim timestamp check failed/);
  });

  it('a JWT valid for more than 24 hours', async () => {
    const request = details(push.subscription('long'), { hi: 1 });
    const header = await vapidHeader(vapid, { aud: push.origin, exp: Math.floor(Date.now() / 1000) + 25 * 3600, sub: SUBJECT });
    await refused(await send(request, { headers: { Authorization: header } }), 401, /more than 24 h ahead/);
  });

  it('a JWT without a mailto: or https: contact', async () => {
    const request = details(push.subscription('nosub'), { hi: 1 });
    const header = await vapidHeader(vapid, { aud: push.origin, exp: inAnHour() });
    await refused(await send(request, { headers: { Authorization: header } }), 401, /sub \(none\)/);
    push.clear();
    const http = await vapidHeader(vapid, { aud: push.origin, exp: inAnHour(), sub: 'http://fieldforge.invalid' });
    await refused(await send(request, { headers: { Authorization: http } }), 401, /not mailto: or https:/);
    // The same hand-signed token with a contact passes: the refusals were the claims'.
    push.clear();
    const good = await vapidHeader(vapid, { aud: push.origin, exp: inAnHour(), sub: 'https://fieldforge.invalid/contact' });
    expect((await send(request, { headers: { Authorization: good } })).status).toBe(201);
  });

  it('no vapid Authorization at all', async () => {
    const request = details(push.subscription('anon'), { hi: 1 });
    await refused(await send(request, { headers: { Authorization: null } }), 401, /not the vapid scheme/);
  });

  it('no TTL header', async () => {
    const request = details(push.subscription('ttl'), { hi: 1 });
    await refused(await send(request, { headers: { TTL: null } }), 400, /TTL header/);
  });

  it('another content encoding', async () => {
    const request = details(push.subscription('aesgcm'), { hi: 1 });
    await refused(await send(request, { headers: { 'Content-Encoding': 'aesgcm' } }), 415, /not aes128gcm/);
  });

  it('a body over 4096 bytes, while 3993 bytes of plaintext (a 4096-byte body) pass', async () => {
    const sub = push.subscription('size');
    const fits = details(sub, 'x'.repeat(3993 - 2));
    expect(fits.body.length).toBe(4096);
    expect((await send(fits)).status).toBe(201);
    push.clear();
    const over = details(sub, 'x'.repeat(3994 - 2));
    const res = await send(over);
    await refused(res, 413, /4097 bytes is over 4096/);
    expect(push.rejected[0]!.bodyBytes).toBe(4097);
  });

  it('a push to a subscription the service never made', async () => {
    const request = details(push.subscription('real'), { hi: 1 });
    await refused(await send({ ...request, endpoint: `${push.origin}/push/nobody-0` }), 404, /no subscription/);
  });
});

describe('what the service answers', () => {
  it('410 for a subscription answered gone, every time, while others still get 201', async () => {
    const gone = push.subscription('gone');
    const alive = push.subscription('alive');
    push.answer(gone, 410);
    expect((await send(details(gone, { n: 1 }))).status).toBe(410);
    expect((await send(details(gone, { n: 2 }))).status).toBe(410);
    expect((await send(details(alive, { n: 3 }))).status).toBe(201);
    const got = await push.waitFor(3);
    expect(got.map((p) => [p.endpoint, p.status])).toEqual([
      [gone.endpoint, 410],
      [gone.endpoint, 410],
      [alive.endpoint, 201],
    ]);
  });

  it('429 once, then 201; 404 and 500 by endpoint id', async () => {
    const busy = push.subscription('busy');
    push.answer(busy.endpoint, 429, 1);
    expect((await send(details(busy, { n: 1 }))).status).toBe(429);
    expect((await send(details(busy, { n: 2 }))).status).toBe(201);
    const lost = push.subscription('lost');
    push.answer(lost.endpoint.split('/').pop()!, 404);
    expect((await send(details(lost, { n: 3 }))).status).toBe(404);
    const broken = push.subscription('broken');
    push.answer(broken, 500, 1);
    expect((await send(details(broken, { n: 4 }))).status).toBe(500);
    expect((await push.waitFor(4)).map((p) => p.status)).toEqual([429, 201, 404, 500]);
  });

  it('slowly when asked to', async () => {
    const slow = push.subscription('slow');
    const quick = push.subscription('quick');
    push.delay(300, slow);
    const started = Date.now();
    expect((await send(details(quick, { n: 1 }))).status).toBe(201);
    expect(Date.now() - started).toBeLessThan(250);
    const slowStart = Date.now();
    expect((await send(details(slow, { n: 2 }))).status).toBe(201);
    expect(Date.now() - slowStart).toBeGreaterThanOrEqual(290);
  });

  it('waitFor fails after its time, naming what was refused', async () => {
    const request = details(push.subscription('late'), { hi: 1 });
    await send(request, { headers: { TTL: null } });
    await expect(push.waitFor(1, 100)).rejects.toThrow(/0 of 1 pushes after 100 ms \(rejected: 400 TTL header/);
  });
});
