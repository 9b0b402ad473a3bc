/**
 * The socket limits of one worker (CONTRACTS C4): at most `perUser` open sockets per user and
 * `perKey` per API key, over every worker (`socket-counts.ts`). A session's socket counts for its
 * user; an API key's for the key and for its service account's user.
 *
 * The worker's own counts are the truth about its sockets — a socket being admitted counts from
 * the moment it asks — and the shared counts are told them. When the shared store cannot be
 * reached (Redis away), a socket is admitted on this worker's counts alone (the limits then hold
 * per worker), and the worker sends all its counts again once the store answers.
 */
import type { SocketCounts, SocketClaim } from './socket-counts.js';

export interface SocketLimits {
  /** Most open sockets of one user, over all workers (`FF_WS_MAX_SOCKETS_PER_USER`). */
  readonly perUser: number;
  /** Most open sockets of one API key, over all workers (`FF_WS_MAX_SOCKETS_PER_KEY`). */
  readonly perKey: number;
}

/** Who a socket counts for. */
export interface SocketHolder {
  readonly db: string;
  readonly uid: number;
  readonly keyHash: string | null;
}

/** A counter a socket counts under, and its limit. */
interface Counter {
  readonly counter: string;
  readonly max: number;
  readonly of: 'user' | 'key';
}

function refusal({ max, of }: Counter): string {
  return of === 'key'
    ? `This API key has ${max} open sockets already, the most one key may have (FF_WS_MAX_SOCKETS_PER_KEY): close one first`
    : `This user has ${max} open sockets already, the most one user may have (FF_WS_MAX_SOCKETS_PER_USER): close one first`;
}

export class SocketQuota {
  /** db → counter (`u:<uid>`, `k:<key hash>`) → this worker's sockets, those being admitted included. */
  readonly #mine = new Map<string, Map<string, number>>();
  /** Databases whose shared counts missed a change (a failed call): sent in full at the next renewal. */
  readonly #stale = new Set<string>();
  #renewing = false;

  constructor(
    private readonly counts: SocketCounts,
    private readonly worker: string,
    private readonly limits: SocketLimits,
    /** How long the shared counts trust this worker's without a renewal, ms. */
    private readonly leaseMs: number,
  ) {}

  /** Counts the socket in: null when admitted, else why it is refused (the `error` frame's detail). */
  async admit(holder: SocketHolder): Promise<string | null> {
    const wanted = this.#counters(holder);
    const mine = this.#table(holder.db);
    const claims: SocketClaim[] = wanted.map(({ counter, max }) => ({ counter, max, mine: (mine.get(counter) ?? 0) + 1 }));
    const full = claims.findIndex((c) => c.mine > c.max);
    if (full >= 0) return refusal(wanted[full]!);
    for (const c of claims) mine.set(c.counter, c.mine);
    let refused = -1;
    try {
      const admission = await this.counts.admit(holder.db, this.worker, claims, this.leaseMs);
      refused = admission.refused;
      if (admission.lapsed) this.#stale.add(holder.db);
    } catch {
      this.#stale.add(holder.db); // admitted on this worker's counts; the bus logs the failure
    }
    if (refused >= 0) {
      // Other calls meanwhile sent counts with this socket in: set them right.
      await this.#send(holder.db, this.#forget(holder.db, claims.map((c) => c.counter)));
      return refusal(wanted[refused]!);
    }
    if (this.#stale.has(holder.db)) void this.#renew(holder.db);
    return null;
  }

  /** The socket is gone: its place is free again. */
  async release(holder: SocketHolder): Promise<void> {
    await this.#send(holder.db, this.#forget(holder.db, this.#counters(holder).map((c) => c.counter)));
  }

  /**
   * Renews this worker's lease on its counts of these databases (each sweep), sending them all
   * where they may be off. Never two renewals at once: a slow store is not piled up on.
   */
  async renewAll(dbs: Iterable<string>): Promise<void> {
    if (this.#renewing) return;
    this.#renewing = true;
    try {
      await Promise.all([...dbs].map((db) => this.#renew(db)));
    } finally {
      this.#renewing = false;
    }
  }

  async #renew(db: string): Promise<void> {
    try {
      const full = this.#stale.delete(db);
      const held = await this.counts.renew(db, this.worker, this.leaseMs, full ? this.#current(db) : null);
      if (!held) await this.counts.renew(db, this.worker, this.leaseMs, this.#current(db));
    } catch {
      this.#stale.add(db);
    }
  }

  async #send(db: string, counts: ReadonlyMap<string, number>): Promise<void> {
    try {
      await this.counts.release(db, this.worker, counts, this.leaseMs);
    } catch {
      this.#stale.add(db);
    }
  }

  #counters(holder: SocketHolder): Counter[] {
    const user: Counter = { counter: `u:${holder.uid}`, max: this.limits.perUser, of: 'user' };
    return holder.keyHash === null ? [user] : [user, { counter: `k:${holder.keyHash}`, max: this.limits.perKey, of: 'key' }];
  }

  #current(db: string): ReadonlyMap<string, number> {
    return this.#mine.get(db) ?? new Map();
  }

  #table(db: string): Map<string, number> {
    let table = this.#mine.get(db);
    if (!table) this.#mine.set(db, (table = new Map()));
    return table;
  }

  /** One socket less under each counter; answers their new counts. */
  #forget(db: string, counters: readonly string[]): Map<string, number> {
    const table = this.#table(db);
    const after = new Map<string, number>();
    for (const counter of counters) {
      const n = (table.get(counter) ?? 1) - 1;
      if (n > 0) table.set(counter, n);
      else table.delete(counter);
      after.set(counter, n);
    }
    if (!table.size) this.#mine.delete(db);
    return after;
  }
}
