/**
 * The gate shared by workers (`REDIS_URL`, `watch-gate.ts`): one key per database,
 * `<prefix>watched:<db>`, set with a lifetime by every worker holding watches of it and refreshed
 * by their sweeps. A writer's worker reads it at most once per `staleMs` per database (one `EXISTS`,
 * shared by the writes waiting for it) and answers from its cache in between, so a write to an
 * unwatched database costs no Redis command. While Redis is unreachable the last answer stands
 * (a write never waits for a reconnection).
 */
import type { Redis } from 'ioredis';
import type { WatchGate } from './watch-gate.js';

/** How long a worker trusts its answer, ms (spec §6.3: "about 2 seconds"). */
export const GATE_CACHE_MS = 2_000;

interface Cached {
  lit: boolean;
  until: number;
  asking: Promise<boolean> | null;
}

export class RedisWatchGate implements WatchGate {
  readonly staleMs: number;
  readonly #cache = new Map<string, Cached>();

  constructor(private readonly redis: Redis, private readonly prefix: string, cacheMs = GATE_CACHE_MS) {
    this.staleMs = cacheMs;
  }

  async light(db: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.#key(db), '1', 'PX', ttlMs);
    // This worker knows at once: its own writes need not wait for the cache to expire.
    this.#cache.set(db, { lit: true, until: Date.now() + this.staleMs, asking: null });
  }

  dim(): void {
    // Other workers may still hold watches: the key goes out when its lifetime ends.
  }

  isLit(db: string): boolean | Promise<boolean> {
    const now = Date.now();
    let cached = this.#cache.get(db);
    if (cached && cached.until > now) return cached.lit;
    if (cached?.asking) return cached.asking;
    if (!cached) this.#cache.set(db, (cached = { lit: false, until: 0, asking: null }));
    const status = this.redis.status;
    if (status !== 'ready' && status !== 'wait') {
      cached.until = now + this.staleMs; // unreachable: keep the last answer a while
      return cached.lit;
    }
    const entry = cached;
    entry.asking = this.redis.exists(this.#key(db)).then(
      (n) => (entry.lit = n > 0),
      () => entry.lit, // the bus logs connection failures
    ).finally(() => {
      entry.until = Date.now() + this.staleMs;
      entry.asking = null;
    });
    return entry.asking;
  }

  #key(db: string): string {
    return `${this.prefix}watched:${db}`;
  }
}
