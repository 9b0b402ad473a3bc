/**
 * Sending one Web Push (modules/messaging/push/send-push.ts) against real local HTTP servers, no
 * database: the connection goes to the addresses the SSRF guard checked, never to a second lookup
 * (DNS rebinding); `FF_PUSH_ALLOWED_ORIGINS` is an exact origin; a payload over the limit is
 * shortened and still delivered within 4096 bytes; a slow push service is given up on; an answer
 * that never ends does not hold the sender; a 403 removes only a subscription made with another
 * key; a burst shares a bounded number of connections per push service and one VAPID signature.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import webpush from 'web-push';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertPushEndpoint, pushTarget } from '../../modules/messaging/push/endpoint-guard.js';
import { MAX_PAYLOAD_BYTES, postPinned, sendPush, type StoredSubscription } from '../../modules/messaging/push/send-push.js';
import { VAPID_LIFETIME_S, vapidAuthorization } from '../../modules/messaging/push/vapid-header.js';
import type { VapidKeys } from '../../modules/messaging/push/vapid-keys.js';
import { readSettings } from '../../src/config/settings.js';
import { PushEndpoint, type TestSubscription } from '../support/push-endpoint.js';

let push: PushEndpoint;
let keys: VapidKeys;

const stored = (sub: TestSubscription, vapidKey: string | null = keys.publicKey): StoredSubscription => ({
  endpoint: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth, vapid_public_key: vapidKey,
});

/** A plain HTTP server answering each request with `handle`; records what came and how many sockets were open at once. */
async function plainServer(handle: (res: import('node:http').ServerResponse) => void) {
  const seen: { host: string | undefined; headers: IncomingHttpHeaders }[] = [];
  const sockets = new Set<Socket>();
  let peak = 0;
  const server: Server = createServer((req, res) => {
    seen.push({ host: req.headers.host, headers: req.headers });
    req.resume();
    req.on('end', () => handle(res));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    peak = Math.max(peak, sockets.size);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port, seen, peak: () => peak,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

beforeAll(async () => {
  push = await PushEndpoint.start();
  const pair = webpush.generateVAPIDKeys();
  keys = { publicKey: pair.publicKey, privateKey: pair.privateKey, subject: 'mailto:push-test@example.com' };
  process.env.FF_PUSH_ALLOWED_ORIGINS = push.origin;
});
afterEach(() => {
  process.env.FF_PUSH_ALLOWED_ORIGINS = push.origin;
  push.clear();
});
afterAll(async () => {
  delete process.env.FF_PUSH_ALLOWED_ORIGINS;
  await push?.stop();
});

describe('the guard and the connection', () => {
  it('connects to the addresses the guard checked, never looking the name up again (a rebinding name gets nowhere new)', async () => {
    const server = await plainServer((res) => res.writeHead(201).end());
    try {
      // `.invalid` never resolves (RFC 6761): only the pinned address can have been reached.
      const url = new URL(`http://push-rebind.invalid:${server.port}/push/x`);
      const answer = await postPinned({ url, addresses: [{ address: '127.0.0.1', family: 4 }] }, { 'content-type': 'application/octet-stream' }, Buffer.from('x'), 2_000);
      expect(answer.status).toBe(201);
      expect(server.seen.map((s) => s.host)).toEqual([`push-rebind.invalid:${server.port}`]);
      // Another name pinned to an address where nothing listens: refused, though its port is open on 127.0.0.1.
      const elsewhere = new URL(`http://push-elsewhere.invalid:${server.port}/push/x`);
      await expect(postPinned({ url: elsewhere, addresses: [{ address: '127.0.0.2', family: 4 }] }, {}, null, 2_000)).rejects.toThrow();
      expect(server.seen).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('the guard answers the addresses it checked: every address of the name', async () => {
    process.env.FF_PUSH_ALLOWED_ORIGINS = 'http://localhost:9555';
    const target = await pushTarget('http://localhost:9555/push/abc');
    expect(target.addresses.length).toBeGreaterThan(0);
    expect(target.addresses.every((a) => a.address === '127.0.0.1' || a.address === '::1')).toBe(true);
    const literal = await pushTarget('https://93.184.215.14/push');
    expect(literal.addresses).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  it('FF_PUSH_ALLOWED_ORIGINS is an exact origin: scheme, host and port', async () => {
    process.env.FF_PUSH_ALLOWED_ORIGINS = ' http://localhost:9555 , https://push.internal.test:8443/ignored-path';
    await expect(assertPushEndpoint('http://localhost:9555/push/1')).resolves.toBeInstanceOf(URL);
    for (const endpoint of [
      'http://127.0.0.1:9555/push/1', // the same machine, another origin (precision 8)
      'http://localhost:9556/push/1', 'https://localhost:9555/push/1', 'http://localhost/push/1',
      'http://push.internal.test:8443/push/1', 'http://user:pw@localhost:9555/push/1',
    ]) {
      await expect(assertPushEndpoint(endpoint), endpoint).rejects.toMatchObject({ field: 'subscription' });
    }
    process.env.FF_PUSH_ALLOWED_ORIGINS = 'not an origin';
    await expect(assertPushEndpoint('https://93.184.215.14/push')).rejects.toThrow(/FF_PUSH_ALLOWED_ORIGINS/);
    // `fieldforge serve` refuses a malformed list at start-up rather than at the first subscribe.
    expect(readSettings({ FF_PUSH_ALLOWED_ORIGINS: 'http://localhost:9555/x, https://Push.Example.com:443' }).pushAllowedOrigins)
      .toEqual(['http://localhost:9555', 'https://push.example.com']);
    expect(() => readSettings({ FF_PUSH_ALLOWED_ORIGINS: 'ftp://push.example.com' })).toThrow(/FF_PUSH_ALLOWED_ORIGINS/);
    expect(readSettings({}).pushAllowedOrigins).toEqual([]);
  });

  it('an endpoint allowed at subscribe time and no longer allowed is refused before its push is sent', async () => {
    const sub = push.subscription('disallowed');
    process.env.FF_PUSH_ALLOWED_ORIGINS = '';
    expect(await sendPush(stored(sub), { title: 't', body: 'b' }, keys)).toBe('refused');
    expect(push.received).toEqual([]);
    expect(push.rejected).toEqual([]);
  });
});

describe('what is sent', () => {
  it('a payload over the limit is shortened (the body to 140 characters) and arrives within 4096 bytes', async () => {
    const sub = push.subscription('big');
    const payload = { kind: 'message', model: 'ProjectTask', document: 3, message_id: 9, title: 'Ann', body: '✓ é '.repeat(2_000), url: '/web#model=ProjectTask&id=3' };
    expect(Buffer.byteLength(JSON.stringify(payload))).toBeGreaterThan(4096);
    expect(await sendPush(stored(sub), payload, keys)).toBe('sent');
    const [got] = await push.waitFor(1);
    expect(got!.bodyBytes).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(got!.text)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    expect(got!.payload).toEqual({ ...payload, body: payload.body.slice(0, 140) });
    expect(got!.ttl).toBe(86_400);
    expect(got!.urgency).toBe('normal');
  });

  it('a payload that cannot be shortened enough keeps what opens the record', async () => {
    const sub = push.subscription('huge');
    const payload = { kind: 'message', model: 'ProjectTask', document: 3, message_id: 9, title: 'Ann', body: 'b', url: '/web#model=ProjectTask&id=3', extra: 'x'.repeat(5_000) };
    expect(await sendPush(stored(sub), payload, keys)).toBe('sent');
    const [got] = await push.waitFor(1);
    expect(got!.payload).toEqual({ kind: 'message', model: 'ProjectTask', document: 3, message_id: 9, url: '/web#model=ProjectTask&id=3' });
  });
});

describe('the VAPID signature', () => {
  it('one JWT per push service, reused by its pushes (still verified by the service), renewed an hour before it expires', async () => {
    const [a, b] = [push.subscription('jwt-a'), push.subscription('jwt-b')];
    const server = await plainServer((res) => res.writeHead(201).end());
    try {
      process.env.FF_PUSH_ALLOWED_ORIGINS = `${push.origin},http://127.0.0.1:${server.port}`;
      expect(await sendPush(stored(a), { body: '1' }, keys)).toBe('sent');
      await new Promise((r) => setTimeout(r, 1_100)); // a JWT signed now would carry another exp
      expect(await sendPush(stored(b), { body: '2' }, keys)).toBe('sent');
      const [first, second] = await push.waitFor(2);
      expect(second!.jwt).toEqual(first!.jwt);
      expect(first!.jwt.exp - Date.now() / 1000).toBeGreaterThan(VAPID_LIFETIME_S - 3_700);
      const other = { ...stored(a), endpoint: `http://127.0.0.1:${server.port}/push/a` };
      expect(await sendPush(other, { body: '3' }, keys)).toBe('sent');
      expect(server.seen[0]!.headers.authorization).not.toBe(vapidAuthorization(push.origin, keys));
      expect(server.seen[0]!.headers.authorization).toBe(vapidAuthorization(`http://127.0.0.1:${server.port}`, keys));
    } finally {
      await server.close();
    }
    const now = Math.floor(Date.now() / 1000);
    const audience = 'https://push.renewal.test';
    const old = vapidAuthorization(audience, keys, now - VAPID_LIFETIME_S + 1_800); // expires in half an hour
    expect(vapidAuthorization(audience, keys, now - VAPID_LIFETIME_S + 1_860)).toBe(old);
    expect(vapidAuthorization(audience, keys, now)).not.toBe(old);
    expect(vapidAuthorization(audience, { ...keys, subject: 'mailto:other@example.com' }, now)).not.toBe(vapidAuthorization(audience, keys, now));
  });
});

describe('what the push service answers', () => {
  it('a push service silent past the timeout is given up on (a retry), long before it answers', async () => {
    const sub = push.subscription('slow');
    push.delay(3_000, sub);
    const started = Date.now();
    expect(await sendPush(stored(sub), { title: 't', body: 'b' }, keys, { timeoutMs: 300 })).toBe('retry');
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('an answer that never ends does not hold the sender: the status counts, the rest is not read', async () => {
    const sub = push.subscription('endless');
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const server = await plainServer((res) => {
      res.writeHead(201);
      const more = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    try {
      process.env.FF_PUSH_ALLOWED_ORIGINS = `http://127.0.0.1:${server.port}`;
      const endless = { ...stored(sub), endpoint: `http://127.0.0.1:${server.port}/push/endless` };
      const started = Date.now();
      expect(await sendPush(endless, { title: 't', body: 'b' }, keys, { timeoutMs: 10_000 })).toBe('sent');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await server.close();
    }
  });

  it('a 403 removes a subscription made with another key, and keeps (retries) one made with the database key', async () => {
    const other = webpush.generateVAPIDKeys().publicKey;
    // The browser subscribed with another server's key: its push service refuses our signature.
    const foreign = push.subscription('foreign', { applicationServerKey: other });
    expect(await sendPush(stored(foreign, other), { title: 't', body: 'b' }, keys)).toBe('gone');
    // Stored with our key, refused all the same (a clock, a subject the service dislikes): kept.
    const ours = push.subscription('ours');
    push.answer(ours, 403);
    expect(await sendPush(stored(ours), { title: 't', body: 'b' }, keys)).toBe('retry');
    expect(await sendPush(stored(ours, null), { title: 't', body: 'b' }, keys)).toBe('gone');
  });

  it('404 and 410 are gone; 429 and 5xx are retried; another 4xx refuses this push only', async () => {
    const cases: [number, string][] = [[201, 'sent'], [202, 'sent'], [404, 'gone'], [410, 'gone'], [429, 'retry'], [500, 'retry'], [503, 'retry'], [400, 'refused'], [413, 'refused']];
    for (const [status, result] of cases) {
      const sub = push.subscription(`status${status}`);
      if (status !== 201) push.answer(sub, status);
      expect(await sendPush(stored(sub), { title: 't', body: 'b' }, keys), String(status)).toBe(result);
    }
  });

  it('a burst of pushes to one push service shares at most 32 connections', async () => {
    const sub = push.subscription('burst');
    const server = await plainServer((res) => setTimeout(() => res.writeHead(201).end(), 30));
    try {
      process.env.FF_PUSH_ALLOWED_ORIGINS = `http://127.0.0.1:${server.port}`;
      const target = { ...stored(sub), endpoint: `http://127.0.0.1:${server.port}/push/burst` };
      const results = await Promise.all(Array.from({ length: 200 }, () => sendPush(target, { title: 't', body: 'b' }, keys)));
      expect(results.every((r) => r === 'sent')).toBe(true);
      expect(server.seen).toHaveLength(200);
      expect(server.peak()).toBeLessThanOrEqual(32);
      expect(server.peak()).toBeGreaterThan(1);
    } finally {
      await server.close();
    }
  });
});
