/**
 * The bus of a single worker (no `REDIS_URL`): a message goes straight to this process's
 * listeners, on a later turn of the event loop so that the publisher (a request finishing its
 * commit) never runs the delivery itself.
 */
import type { Bus, BusListener, BusMessage } from './bus.js';
import { InProcessPresence } from './in-process-presence.js';
import { InProcessSocketCounts } from './in-process-socket-counts.js';
import { InProcessWatchGate } from './in-process-watch-gate.js';

interface Subscription {
  listener: BusListener;
  wants: (db: string) => boolean;
}

export class InProcessBus implements Bus {
  readonly presence = new InProcessPresence();
  readonly watchGate = new InProcessWatchGate();
  readonly socketCounts = new InProcessSocketCounts();
  readonly #subscriptions = new Set<Subscription>();

  publish(message: BusMessage): void {
    setImmediate(() => {
      for (const s of this.#subscriptions) {
        if (!s.wants(message.db)) continue;
        try {
          s.listener(message);
        } catch (err) {
          console.error('realtime delivery failed', err);
        }
      }
    });
  }

  subscribe(listener: BusListener, wants: (db: string) => boolean): () => void {
    const subscription = { listener, wants };
    this.#subscriptions.add(subscription);
    return () => this.#subscriptions.delete(subscription);
  }

  async close(): Promise<void> {
    this.#subscriptions.clear();
  }
}
