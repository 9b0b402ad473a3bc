/**
 * The visitor hub's writes, gathered so that a crowd costs what one visitor does: presence
 * transitions and typing of every session of a database within `flushMs` go in one unit of work
 * each (set-based: a few statements for any number of sessions), and history reads run at most
 * `maxReads` at a time per worker. A thousand widgets reconnecting at once after a deploy would
 * otherwise ask for a thousand database connections in the same millisecond (the worker's budget
 * refuses all past its queue, `db/connection-budget.ts`): here they wait their turn in memory,
 * which costs a closure each.
 */
export interface PresenceChange {
  id: number;
  online: boolean;
}

export interface VisitorWrites {
  presence(db: string, changes: readonly PresenceChange[]): Promise<void>;
  typing(db: string, sessionIds: readonly number[]): Promise<void>;
}

export interface BookkeepingOptions {
  flushMs: number;
  maxReads: number;
  /** Runs a write, logging (not throwing) its failure. */
  quietly(fn: () => Promise<void>): Promise<void>;
}

export class VisitorBookkeeping {
  /** db → session → its latest presence (a session that came and went within a window is told once, as it is now). */
  #presence = new Map<string, Map<number, boolean>>();
  #typing = new Map<string, Set<number>>();
  #timer: NodeJS.Timeout | null = null;
  #flushes = new Set<Promise<void>>();
  #reading = 0;
  #waiting: (() => void)[] = [];

  constructor(private readonly writes: VisitorWrites, private readonly options: BookkeepingOptions) {}

  presence(db: string, id: number, online: boolean): void {
    let changes = this.#presence.get(db);
    if (!changes) this.#presence.set(db, (changes = new Map()));
    changes.set(id, online);
    this.#schedule();
  }

  typing(db: string, id: number): void {
    let ids = this.#typing.get(db);
    if (!ids) this.#typing.set(db, (ids = new Set()));
    ids.add(id);
    this.#schedule();
  }

  /** Runs a read once fewer than `maxReads` are running on this worker. */
  async read<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#reading >= this.options.maxReads) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#reading++;
    try {
      return await fn();
    } finally {
      this.#reading--;
      this.#waiting.shift()?.();
    }
  }

  /** Writes what is gathered now, and waits for every write under way. */
  async drain(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#flush();
    await Promise.allSettled([...this.#flushes]);
  }

  #schedule(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = null;
      this.#flush();
    }, this.options.flushMs);
  }

  #flush(): void {
    const presence = this.#presence;
    const typing = this.#typing;
    this.#presence = new Map();
    this.#typing = new Map();
    for (const [db, changes] of presence) {
      this.#track(this.options.quietly(() => this.writes.presence(db, [...changes].map(([id, online]) => ({ id, online })))));
    }
    for (const [db, ids] of typing) this.#track(this.options.quietly(() => this.writes.typing(db, [...ids])));
  }

  #track(p: Promise<void>): void {
    this.#flushes.add(p);
    void p.finally(() => this.#flushes.delete(p));
  }
}
