/**
 * Socket counts of the workers of one process (no `REDIS_URL`, `socket-counts.ts`): each hub's
 * counts in memory, exact, and never lapsing — a hub of this process cannot vanish without
 * closing its sockets.
 */
import type { Admission, SocketClaim, SocketCounts } from './socket-counts.js';

export class InProcessSocketCounts implements SocketCounts {
  /** db → worker → counter → sockets. */
  readonly #counts = new Map<string, Map<string, Map<string, number>>>();

  async admit(db: string, worker: string, claims: readonly SocketClaim[]): Promise<Admission> {
    const workers = this.#counts.get(db);
    const refused = claims.findIndex((claim) => {
      let others = 0;
      for (const [w, counts] of workers ?? []) if (w !== worker) others += counts.get(claim.counter) ?? 0;
      return others + claim.mine > claim.max;
    });
    if (refused < 0) this.#set(db, worker, claims.map((c) => [c.counter, c.mine]));
    return { refused, lapsed: false };
  }

  async release(db: string, worker: string, counts: ReadonlyMap<string, number>): Promise<void> {
    this.#set(db, worker, counts);
  }

  async renew(db: string, worker: string, _leaseMs: number, all: ReadonlyMap<string, number> | null): Promise<boolean> {
    if (all) {
      this.#counts.get(db)?.delete(worker);
      this.#set(db, worker, all);
    }
    return true;
  }

  #set(db: string, worker: string, counts: Iterable<readonly [string, number]>): void {
    let workers = this.#counts.get(db);
    if (!workers) this.#counts.set(db, (workers = new Map()));
    let mine = workers.get(worker);
    if (!mine) workers.set(worker, (mine = new Map()));
    for (const [counter, n] of counts) {
      if (n > 0) mine.set(counter, n);
      else mine.delete(counter);
    }
    if (!mine.size) workers.delete(worker);
    if (!workers.size) this.#counts.delete(db);
  }
}
