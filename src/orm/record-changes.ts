/**
 * The records a unit of work changed directly, for record-changed pings (spec §6.3, CONTRACTS C4).
 * The ORM's write path fills the unit of work's `RecordChanges` — only while the environment's
 * change feed says the database is watched (its per-database gate) — and hands them to the feed
 * once the transaction has committed. What the feed does with them (the socket pings) is the
 * realtime layer's business: the ORM only knows this neutral hook.
 *
 * Recompute cascades never come here: they write through `recompute.ts`, not through the write path.
 */
import type { TenantDatabase } from '../db/engine.js';
import type { Registry } from './registry.js';

/** A record written directly, with the names of its fields whose value changed. */
export interface RecordChange {
  readonly model: string;
  readonly id: number;
  readonly fields: readonly string[];
  /** The record's `updated_date` as the unit of work's last write of it set it (ISO 8601). */
  readonly updatedDate: string;
}

/** What a committed unit of work changed, and who changed it. */
export interface CommittedChanges {
  readonly db: TenantDatabase;
  readonly registry: Registry;
  /** The acting user; null for the platform itself. */
  readonly uid: number | null;
  /** The editing session (its sockets are not pinged); null for an API key or the platform. */
  readonly sessionId: number | null;
  readonly records: readonly RecordChange[];
}

/** The hook the write path reports to (implemented by `realtime/record-changed.ts`). */
export interface RecordChangeFeed {
  /**
   * The per-database gate: whether some record of `db` may be watched. A boolean from cache, or a
   * promise when the cached answer expired. False → the write path does nothing more for pings.
   */
  isWatched(db: string): boolean | Promise<boolean>;
  /** Called once after commit with everything the unit of work changed; must not throw or wait. */
  publish(changes: CommittedChanges): void;
}

interface Entry {
  readonly model: string;
  readonly id: number;
  readonly fields: Set<string>;
  updatedDate: string;
}

/** Everything a unit of work changed directly: several writes of one record merge (union of fields). */
export class RecordChanges {
  readonly #records = new Map<string, Entry>();
  /** Set once the after-commit hand-over is queued. */
  scheduled = false;

  get size(): number {
    return this.#records.size;
  }

  add(model: string, id: number, fields: Iterable<string>, updatedDate: string): void {
    const key = `${model}:${id}`;
    let entry = this.#records.get(key);
    if (!entry) this.#records.set(key, (entry = { model, id, fields: new Set(), updatedDate }));
    for (const f of fields) entry.fields.add(f);
    entry.updatedDate = updatedDate;
  }

  /**
   * A copy of what is collected so far, to `restore` when a savepoint is rolled back — with
   * whether the hand-over was queued: a hand-over queued inside the savepoint goes with it.
   */
  mark(): RecordChangesMark {
    if (!this.#records.size && !this.scheduled) return NOTHING;
    const records = new Map<string, Entry>();
    for (const [key, e] of this.#records) records.set(key, { ...e, fields: new Set(e.fields) });
    return { records, scheduled: this.scheduled };
  }

  restore(mark: RecordChangesMark): void {
    const { records, scheduled } = mark;
    this.#records.clear();
    for (const [key, e] of records) this.#records.set(key, e);
    this.scheduled = scheduled;
  }

  /** Forgets everything (handed over). */
  clear(): void {
    this.#records.clear();
    this.scheduled = false;
  }

  list(): RecordChange[] {
    return [...this.#records.values()].map((e) => ({ model: e.model, id: e.id, fields: [...e.fields], updatedDate: e.updatedDate }));
  }
}

/** A copy of a `RecordChanges` (`mark`/`restore`); not to be read. */
export interface RecordChangesMark {
  readonly records: ReadonlyMap<string, Entry>;
  readonly scheduled: boolean;
}

const NOTHING: RecordChangesMark = { records: new Map(), scheduled: false };
