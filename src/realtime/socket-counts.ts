/**
 * The open sockets of each user and API key of a database, over every worker (CONTRACTS C4
 * socket limits). Each worker keeps the counts of its own sockets under its id; a new socket is
 * admitted only while every total — the other workers' counts plus this worker's — stays within
 * its limit, checked and counted in one atomic step, so two workers cannot both take the last
 * place. A worker's counts hold on a lease it renews (`renew`, each sweep): the counts of a worker
 * that stopped renewing (it crashed, or lost Redis) stop counting once the lease runs out.
 *
 * Counts are written as the worker knows them (the number of its sockets, not an increment), so
 * any later call mends an earlier one that failed; after a lapsed lease the worker sends them all.
 */

/** One limit a new socket must fit: a counter (`u:<uid>`, `k:<key hash>`) and its most sockets. */
export interface SocketClaim {
  readonly counter: string;
  readonly max: number;
  /** This worker's sockets under the counter, the new one included. */
  readonly mine: number;
}

export interface Admission {
  /** The index of the claim whose limit is reached (nothing counted then), or -1: admitted. */
  readonly refused: number;
  /** The worker's lease had lapsed before this call: its other counts were dropped, send them again. */
  readonly lapsed: boolean;
}

export interface SocketCounts {
  /** Counts a socket in for every claim, unless one of them is full over all live workers. */
  admit(db: string, worker: string, claims: readonly SocketClaim[], leaseMs: number): Promise<Admission>;
  /** Sets this worker's counts after a socket left (`0` drops the counter). */
  release(db: string, worker: string, counts: ReadonlyMap<string, number>, leaseMs: number): Promise<void>;
  /**
   * Renews the worker's lease; with `all`, replaces its counts by these first. Answers false when
   * the lease had lapsed (and its counts were dropped: send them all).
   */
  renew(db: string, worker: string, leaseMs: number, all: ReadonlyMap<string, number> | null): Promise<boolean>;
}
