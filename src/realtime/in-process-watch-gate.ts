/**
 * The gate of a single worker (no `REDIS_URL`, `watch-gate.ts`): the worker's own hub lights and
 * dims it, and a writer reads it in memory — exact, so nothing is ever caught up.
 */
import type { WatchGate } from './watch-gate.js';

export class InProcessWatchGate implements WatchGate {
  readonly staleMs = 0;
  /** Database → when its gate goes out (epoch ms). */
  readonly #until = new Map<string, number>();

  async light(db: string, ttlMs: number): Promise<void> {
    this.#until.set(db, Date.now() + ttlMs);
  }

  dim(db: string): void {
    this.#until.delete(db);
  }

  isLit(db: string): boolean {
    const until = this.#until.get(db);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#until.delete(db);
    return false;
  }
}
