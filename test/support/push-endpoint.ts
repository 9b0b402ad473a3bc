/**
 * A real Web Push service on a free local port, for the tests of push delivery: it hands out
 * browser-shaped subscriptions, checks every POST as a push service and a user agent together would
 * (RFC 8030 headers, RFC 8292 VAPID, RFC 8188/8291 `aes128gcm`), decrypts the body by hand with
 * node:crypto — never with web-push, so the sender's encryption is checked independently — and
 * answers what the test scripted (201 by default; 404, 410, 429, 500…), slowly if asked.
 *
 *   const push = await PushEndpoint.start();
 *   const sub = push.subscription('ada');          // store it as the browser's PushSubscription JSON
 *   push.answer(sub, 410);                         // from now on: the subscription is gone
 *   const [got] = await push.waitFor(1);           // got.payload, got.ttl, got.jwt.sub, got.status
 */
import { createECDH, createDecipheriv, createHmac, randomBytes, type ECDH } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importJWK, jwtVerify } from 'jose';

/** The JSON of a browser's PushSubscription (what `pushManager.subscribe()` gives, `toJSON()`ed). */
export interface TestSubscription {
  endpoint: string;
  expirationTime: null;
  keys: { p256dh: string; auth: string };
}

/** A push that passed every check, decrypted; `status` is what the service answered it. */
export interface ReceivedPush {
  endpoint: string;
  /** `JSON.parse(text)`, or undefined when the text is not JSON. */
  payload: unknown;
  text: string;
  ttl: number;
  urgency: string | null;
  topic: string | null;
  contentEncoding: string;
  jwt: { aud: string; exp: number; sub: string };
  vapidPublicKey: string;
  bodyBytes: number;
  status: number;
  at: number;
}

/** A push refused before delivery: why, and with which status. */
export interface RejectedPush {
  endpoint: string;
  status: number;
  reason: string;
  bodyBytes: number;
}

export interface PushEndpointOptions {
  /**
   * Largest body accepted, encryption header included. RFC 8030 §7.2 lets a push service refuse more
   * than 4096 octets and RFC 8291 §4 counts the header in it: 3993 octets of plaintext at most.
   */
  maxBodyBytes?: number;
}

export interface SubscriptionOptions {
  /** The VAPID public key the browser subscribed with (`applicationServerKey`): any other gets 403. */
  applicationServerKey?: string;
}

interface Subscriber {
  id: string;
  endpoint: string;
  ecdh: ECDH;
  publicKey: Buffer;
  auth: Buffer;
  applicationServerKey: string | null;
  answers: { status: number; times: number }[];
  delayMs: number | null;
}

/** A refusal while checking a push: the status to answer and the reason to record. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    reason: string,
  ) {
    super(reason);
  }
}

const URGENCIES = new Set(['very-low', 'low', 'normal', 'high']);
const MAX_JWT_LIFETIME_S = 24 * 60 * 60;

export class PushEndpoint {
  readonly received: ReceivedPush[] = [];
  readonly rejected: RejectedPush[] = [];
  #subscribers = new Map<string, Subscriber>();
  #count = 0;
  #messages = 0;
  #delayMs = 0;
  #waiters = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    readonly origin: string,
    private readonly maxBodyBytes: number,
  ) {}

  static async start(options: PushEndpointOptions = {}): Promise<PushEndpoint> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const push = new PushEndpoint(server, `http://127.0.0.1:${port}`, options.maxBodyBytes ?? 4096);
    server.on('request', (req, res) => void push.#handle(req, res));
    return push;
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  /** A new subscriber with its own P-256 key pair and 16-byte auth secret. */
  subscription(name = 'sub', options: SubscriptionOptions = {}): TestSubscription {
    const id = `${name.replace(/[^A-Za-z0-9_-]/g, '_')}-${++this.#count}`;
    const ecdh = createECDH('prime256v1');
    const publicKey = ecdh.generateKeys();
    const auth = randomBytes(16);
    const endpoint = `${this.origin}/push/${id}`;
    this.#subscribers.set(id, {
      id,
      endpoint,
      ecdh,
      publicKey,
      auth,
      applicationServerKey: options.applicationServerKey ?? null,
      answers: [],
      delayMs: null,
    });
    return { endpoint, expirationTime: null, keys: { p256dh: publicKey.toString('base64url'), auth: auth.toString('base64url') } };
  }

  /** What the next `times` valid pushes to that subscription are answered (every one by default). */
  answer(subscription: TestSubscription | string, status: number, times = Infinity): void {
    this.#subscriber(subscription).answers.push({ status, times });
  }

  /** Waits `ms` before answering: every subscription, or only the one given. */
  delay(ms: number, subscription?: TestSubscription | string): void {
    if (subscription === undefined) this.#delayMs = ms;
    else this.#subscriber(subscription).delayMs = ms;
  }

  /** Forgets what was received and rejected, and every scripted answer and delay. */
  clear(): void {
    this.received.length = 0;
    this.rejected.length = 0;
    this.#delayMs = 0;
    for (const s of this.#subscribers.values()) {
      s.answers = [];
      s.delayMs = null;
    }
  }

  /** Resolves with the received pushes once there are `count`; fails after `ms`, saying what was refused. */
  async waitFor(count: number, ms = 5000): Promise<ReceivedPush[]> {
    if (this.received.length >= count) return [...this.received];
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (this.received.length < count) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        const refused = this.rejected.map((r) => `${r.status} ${r.reason}`).join('; ') || 'none';
        reject(new Error(`push endpoint: ${this.received.length} of ${count} pushes after ${ms} ms (rejected: ${refused})`));
      }, ms);
      this.#waiters.add(check);
    });
    return [...this.received];
  }

  #subscriber(subscription: TestSubscription | string): Subscriber {
    const key = typeof subscription === 'string' ? subscription : subscription.endpoint;
    const id = key.startsWith(this.origin) ? key.slice(`${this.origin}/push/`.length) : key;
    const found = this.#subscribers.get(id);
    if (!found) throw new Error(`push endpoint: no subscription ${key}`);
    return found;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const endpoint = `${this.origin}${req.url ?? ''}`;
    let bodyBytes = 0;
    try {
      const { body, bytes } = await readBody(req, this.maxBodyBytes);
      bodyBytes = bytes;
      const subscriber = this.#subscribers.get((req.url ?? '').replace(/^\/push\//, ''));
      if (req.method !== 'POST' || !req.url?.startsWith('/push/')) throw new Refusal(404, `no route ${req.method} ${req.url}`);
      if (!subscriber) throw new Refusal(404, `no subscription at ${req.url}`);
      if (bytes > this.maxBodyBytes) throw new Refusal(413, `body of ${bytes} bytes is over ${this.maxBodyBytes}`);
      const push = await this.#check(req, body, subscriber);
      const status = nextAnswer(subscriber);
      await sleep(subscriber.delayMs ?? this.#delayMs);
      this.received.push({ ...push, status, at: Date.now() });
      for (const wake of [...this.#waiters]) wake();
      const headers: Record<string, string> = status === 201 ? { Location: `${this.origin}/message/${++this.#messages}`, TTL: String(push.ttl) } : {};
      res.writeHead(status, headers).end();
    } catch (error) {
      const refusal = error instanceof Refusal ? error : new Refusal(500, `push endpoint failed: ${(error as Error).message}`);
      this.rejected.push({ endpoint, status: refusal.status, reason: refusal.message, bodyBytes });
      if (!res.headersSent) res.writeHead(refusal.status, { 'Content-Type': 'text/plain' }).end(refusal.message);
    }
  }

  /** Checks the headers, the VAPID token and the encryption; the push as received, or a Refusal. */
  async #check(req: IncomingMessage, body: Buffer, subscriber: Subscriber): Promise<Omit<ReceivedPush, 'status' | 'at'>> {
    const contentEncoding = header(req, 'content-encoding');
    if (contentEncoding !== 'aes128gcm') throw new Refusal(415, `Content-Encoding ${contentEncoding ?? '(none)'} is not aes128gcm`);
    const ttlText = header(req, 'ttl');
    if (ttlText === null || !/^\d+$/.test(ttlText)) throw new Refusal(400, `TTL header ${ttlText ?? '(none)'} is not a non-negative integer`);
    const urgency = header(req, 'urgency');
    if (urgency !== null && !URGENCIES.has(urgency)) throw new Refusal(400, `Urgency ${urgency} is not one of RFC 8030's`);
    const topic = header(req, 'topic');
    if (topic !== null && !/^[A-Za-z0-9_-]{1,32}$/.test(topic)) throw new Refusal(400, `Topic ${topic} is not ≤ 32 base64url characters`);
    const { jwt, vapidPublicKey } = await verifyVapid(header(req, 'authorization'), this.origin, subscriber.applicationServerKey);
    const text = decrypt(body, subscriber);
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      payload = undefined;
    }
    return {
      endpoint: subscriber.endpoint,
      payload,
      text,
      ttl: Number(ttlText),
      urgency,
      topic,
      contentEncoding,
      jwt,
      vapidPublicKey,
      bodyBytes: body.length,
    };
  }
}

function nextAnswer(subscriber: Subscriber): number {
  const next = subscriber.answers[0];
  if (!next) return 201;
  if (--next.times <= 0) subscriber.answers.shift();
  return next.status;
}

/**
 * RFC 8292: `Authorization: vapid t=<JWT>, k=<key>`, an ES256 JWT signed by that uncompressed P-256
 * key, whose `aud` is this service's origin, `exp` in the next 24 hours and `sub` a mailto: or https:
 * contact. 401 for a missing or bad token; 403 when the key is not the one the subscription was
 * made with.
 */
async function verifyVapid(authorization: string | null, origin: string, applicationServerKey: string | null) {
  const match = /^vapid\s+(.+)$/i.exec(authorization ?? '');
  if (!match) throw new Refusal(401, `Authorization ${authorization ?? '(none)'} is not the vapid scheme`);
  const params = new Map(
    match[1]!.split(',').map((part) => {
      const at = part.indexOf('=');
      return [part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim()] as const;
    }),
  );
  const token = params.get('t');
  const k = params.get('k');
  if (!token || !k) throw new Refusal(401, 'vapid Authorization lacks t= or k=');
  const raw = Buffer.from(k, 'base64url');
  if (raw.length !== 65 || raw[0] !== 0x04) throw new Refusal(401, `vapid k is ${raw.length} bytes, not an uncompressed P-256 key`);
  if (applicationServerKey !== null && k !== applicationServerKey) throw new Refusal(403, 'vapid k is not the applicationServerKey of the subscription');
  let claims;
  try {
    const key = await importJWK(
      { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33, 65).toString('base64url') },
      'ES256',
    );
    ({ payload: claims } = await jwtVerify(token, key, { algorithms: ['ES256'], audience: origin, requiredClaims: ['exp'] }));
  } catch (error) {
    throw new Refusal(401, `vapid JWT refused: ${(error as Error).message}`);
  }
  const exp = claims.exp!;
  if (exp > Math.floor(Date.now() / 1000) + MAX_JWT_LIFETIME_S) throw new Refusal(401, `vapid JWT exp ${exp} is more than 24 h ahead`);
  const sub = claims.sub;
  if (typeof sub !== 'string' || !/^(mailto:|https:)/.test(sub)) throw new Refusal(401, `vapid JWT sub ${sub ?? '(none)'} is not mailto: or https:`);
  return { jwt: { aud: String(claims.aud), exp, sub }, vapidPublicKey: k };
}

/** RFC 8188 `aes128gcm` with RFC 8291's key derivation, one record; the plaintext, or a Refusal. */
function decrypt(body: Buffer, subscriber: Subscriber): string {
  if (body.length < 21) throw new Refusal(400, `body of ${body.length} bytes is shorter than an aes128gcm header`);
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  if (idlen !== 65 || asPublic[0] !== 0x04) throw new Refusal(400, `keyid is ${idlen} bytes, not the sender's uncompressed P-256 key`);
  // RFC 8291 §4: one record only, so a record longer than rs means the sender split the message.
  if (rs < 18 || record.length > rs) throw new Refusal(400, `record of ${record.length} bytes does not fit one record of rs ${rs}`);
  if (record.length < 17) throw new Refusal(400, `record of ${record.length} bytes is shorter than a tag and a delimiter`);
  let ecdhSecret: Buffer;
  try {
    ecdhSecret = subscriber.ecdh.computeSecret(asPublic);
  } catch (error) {
    throw new Refusal(400, `keyid is not a point on P-256: ${(error as Error).message}`);
  }
  const prkKey = hmac(subscriber.auth, ecdhSecret);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), subscriber.publicKey, asPublic]);
  const ikm = hmac(prkKey, Buffer.concat([keyInfo, Buffer.from([1])]));
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01')).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01')).subarray(0, 12);
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
    decipher.setAuthTag(record.subarray(record.length - 16));
    plain = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  } catch (error) {
    throw new Refusal(400, `decryption failed: ${(error as Error).message}`);
  }
  let end = plain.length;
  while (end > 0 && plain[end - 1] === 0) end--;
  if (end === 0 || plain[end - 1] !== 0x02) throw new Refusal(400, 'plaintext has no last-record delimiter 0x02');
  return plain.subarray(0, end - 1).toString('utf8');
}

function hmac(key: Buffer, data: Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

/** The body and its size; past `limit` the bytes are counted and dropped (it will be refused). */
async function readBody(req: IncomingMessage, limit: number): Promise<{ body: Buffer; bytes: number }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes <= limit) chunks.push(chunk);
  }
  return { body: Buffer.concat(chunks), bytes };
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
