/**
 * The per-database gate of record-changed pings (spec §6.3, CONTRACTS C4): lit while some socket,
 * on any worker, watches a record of the database. A writer asks it before doing any realtime
 * work for an update, and an unlit answer means none at all — so the answer must cost nothing:
 * it is cached by the writer's worker (`staleMs`), and a watch just made may therefore miss the
 * writes of the next `staleMs`; the socket hub catches those up (`socket-hub.ts`).
 *
 * Workers holding watches of a database keep its gate lit (`light`, refreshed by each sweep, with
 * a lifetime, so the gate of a vanished worker goes out by itself).
 */
export interface WatchGate {
  /** How stale a writer's answer may be, ms: 0 when it is exact (one worker). */
  readonly staleMs: number;
  /** Lights the gate of `db` for `ttlMs` from now (a worker holds watches of it). */
  light(db: string, ttlMs: number): Promise<void>;
  /** This worker holds no more watches of `db` (the gate goes out now, or when its lifetime ends). */
  dim(db: string): void;
  /** Whether `db` may be watched: an answer at once when one is cached, else a promise of one. */
  isLit(db: string): boolean | Promise<boolean>;
}
