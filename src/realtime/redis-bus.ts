/**
 * The bus between workers (`REDIS_URL`): Redis pub/sub on one channel, `<prefix>bus`, plus
 * presence in Redis (`redis-presence.ts`), the record-changed gate (`redis-watch-gate.ts`) and the
 * socket counts (`redis-socket-counts.ts`).
 * A message travels as `<origin>\n<db>\n<json>`: a worker drops its own messages (it delivered
 * them to its sockets already, at once — so a worker keeps serving its own sockets while Redis is
 * away) and those of databases it holds no socket of, both before parsing the JSON. Isolation of
 * databases rests on that `db` field.
 *
 * Connections are opened on first use (a CLI command that never pushes never connects). ioredis
 * reconnects by itself, and the subscriber re-subscribes; meanwhile a publish or presence
 * command fails after one reconnection attempt instead of queueing without bound, and the
 * failure is logged (at most every few seconds), never thrown at the publisher.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Bus, BusListener, BusMessage } from './bus.js';
import { RedisPresence } from './redis-presence.js';
import { RedisSocketCounts } from './redis-socket-counts.js';
import { RedisWatchGate } from './redis-watch-gate.js';

interface Subscription {
  listener: BusListener;
  wants: (db: string) => boolean;
}

/** Least time between two log lines about Redis being unreachable. */
const LOG_EVERY_MS = 10_000;

export class RedisBus implements Bus {
  readonly presence: RedisPresence;
  readonly watchGate: RedisWatchGate;
  readonly socketCounts: RedisSocketCounts;
  /** This process's mark on its messages. */
  readonly #origin = randomBytes(6).toString('hex');
  readonly #channel: string;
  readonly #commands: Redis;
  #subscriber: Redis | null = null;
  readonly #subscriptions = new Set<Subscription>();
  #loggedAt = 0;

  constructor(url: string, prefix = 'ff:') {
    this.#channel = `${prefix}bus`;
    // One retry: while Redis is away a command fails within a reconnection attempt (≤ 2 s)
    // instead of waiting in an ever-growing queue.
    this.#commands = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    this.#commands.on('error', (err) => this.#log('Redis connection', err));
    this.presence = new RedisPresence(this.#commands, prefix);
    this.watchGate = new RedisWatchGate(this.#commands, prefix);
    this.socketCounts = new RedisSocketCounts(this.#commands, prefix);
  }

  publish(message: BusMessage): void {
    this.#deliver(message);
    let payload: string;
    try {
      payload = `${this.#origin}\n${message.db}\n${JSON.stringify({ to: message.to, frame: message.frame })}`;
    } catch (err) {
      this.#log('Realtime frame not serialisable', err);
      return;
    }
    this.#commands.publish(this.#channel, payload).catch((err: unknown) => this.#log('Realtime publish', err));
  }

  subscribe(listener: BusListener, wants: (db: string) => boolean): () => void {
    const subscription = { listener, wants };
    this.#subscriptions.add(subscription);
    if (!this.#subscriber) {
      // Subscribed on every (re)connection by us, not by ioredis's autoResubscribe, whose SUBSCRIBE
      // promise nobody holds: a connection closed before its reply was an unhandled rejection.
      const subscriber = this.#commands.duplicate({ lazyConnect: false, maxRetriesPerRequest: null, autoResubscribe: false });
      subscriber.on('error', (err) => this.#log('Redis subscriber', err));
      subscriber.on('message', (_channel: string, payload: string) => this.#receive(payload));
      subscriber.on('ready', () => {
        subscriber.subscribe(this.#channel).catch((err: unknown) => this.#log('Realtime subscribe', err));
      });
      this.#subscriber = subscriber;
    }
    return () => this.#subscriptions.delete(subscription);
  }

  async close(): Promise<void> {
    this.#subscriptions.clear();
    this.#subscriber?.disconnect();
    this.#commands.disconnect();
  }

  #receive(payload: string): void {
    const first = payload.indexOf('\n');
    const second = payload.indexOf('\n', first + 1);
    if (first < 0 || second < 0 || payload.slice(0, first) === this.#origin) return;
    const db = payload.slice(first + 1, second);
    if (![...this.#subscriptions].some((s) => s.wants(db))) return;
    let body: Pick<BusMessage, 'to' | 'frame'>;
    try {
      body = JSON.parse(payload.slice(second + 1));
    } catch {
      return; // not one of ours
    }
    this.#deliverNow({ db, to: body.to, frame: body.frame } as BusMessage);
  }

  /** To this worker's own listeners, on a later turn (the publisher never runs the delivery). */
  #deliver(message: BusMessage): void {
    setImmediate(() => this.#deliverNow(message));
  }

  #deliverNow(message: BusMessage): void {
    for (const s of this.#subscriptions) {
      if (!s.wants(message.db)) continue;
      try {
        s.listener(message);
      } catch (err) {
        console.error('realtime delivery failed', err);
      }
    }
  }

  #log(what: string, err: unknown): void {
    const now = Date.now();
    if (now - this.#loggedAt < LOG_EVERY_MS) return;
    this.#loggedAt = now;
    console.error(`${what} failed (Redis unreachable? the bus reconnects by itself): ${(err as Error)?.message ?? err}`);
  }
}
