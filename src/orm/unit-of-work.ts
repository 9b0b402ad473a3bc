/**
 * One unit of work, as SQLAlchemy's `Session` is one: the transaction every statement runs in,
 * its nested savepoints, the work to run once it commits, the field values model code assigned
 * but not yet wrote (`pending-writes.ts`) and the records it changed (`record-changes.ts`).
 *
 * A savepoint is a frame of all three: what is queued inside it — an after-commit job (a socket
 * push, a file sweep, the record-changed hand-over), an assignment, a record change — joins the
 * enclosing frame when the savepoint is released and is dropped with it when it rolls back, so a
 * notification sent by model code for an import row that is then refused never goes out, while
 * the same sent for a row that commits does. Without a transaction (the pool itself, for
 * read-only work) nothing can roll back: after-commit work runs at once.
 *
 * Frames nest strictly (the statements of one transaction are sequential): a savepoint closed
 * while an inner one is still open is a bug, and fails loudly.
 */
import type { SqlExecutor } from '../db/sql-executor.js';
import { sql } from '../db/sql-fragment.js';
import { PendingWrites } from './pending-writes.js';
import { RecordChanges, type RecordChangesMark } from './record-changes.js';
import type { NestedWrites } from './write/nested-writes.js';

/** Work for after the commit; a returned promise is awaited, a failure logged (never the caller's). */
export type AfterCommitJob = () => unknown;

/** Writes a queue of assignments through the write path (`flush-assignments.ts`). */
export type AssignmentFlush = (pending: PendingWrites) => Promise<void>;

export interface SavepointOptions<T> {
  /** Asked once `fn` succeeded (its assignments written): false rolls back what it did all the same. */
  keep?: (value: T) => boolean;
}

interface Frame {
  readonly jobs: AfterCommitJob[];
  readonly pendingWrites: PendingWrites;
  /** The record changes as the frame opened, restored when it rolls back (none for the root). */
  readonly changes: RecordChangesMark | null;
  readonly name: string;
}

export class UnitOfWork {
  /** The records this unit of work changed directly (collected only while the change feed says the database is watched). */
  readonly recordChanges = new RecordChanges();
  readonly #frames: Frame[];
  readonly #flush: AssignmentFlush;
  #committed = false;

  /**
   * @param trx the open transaction every statement runs in, or the pool itself for read-only work
   * @param flush writes queued assignments (injected: the write path is built on the unit of work)
   * @param writes the record writes nested writes recurse into (injected for the same reason)
   */
  constructor(readonly trx: SqlExecutor, flush: AssignmentFlush, readonly writes: NestedWrites) {
    this.#flush = flush;
    this.#frames = [{ jobs: [], pendingWrites: new PendingWrites(), changes: null, name: '' }];
  }

  /** Whether statements run in a transaction (false: the pool, each statement on its own). */
  get inTransaction(): boolean {
    return this.trx.isTransaction;
  }

  /** Field values assigned in model code, written before the next statement and before the frame closes. */
  get pendingWrites(): PendingWrites {
    return this.#top().pendingWrites;
  }

  /** Open savepoints (0: none). */
  get depth(): number {
    return this.#frames.length - 1;
  }

  /**
   * Queues `job` for after the commit, in the innermost open savepoint (dropped if it rolls back).
   * Without a transaction — or once committed — the work is already durable: `job` runs at once.
   */
  afterCommit(job: AfterCommitJob): void {
    if (this.inTransaction && !this.#committed) this.#top().jobs.push(job);
    else void runJob(job);
  }

  /**
   * Runs `fn` in a savepoint (a name of its own, so savepoints nest). `fn` throws → everything it
   * did is rolled back — statements, after-commit jobs, assignments, record changes — and the
   * error is rethrown. `fn` resolves → its assignments are written inside the savepoint, then it is
   * released and what it queued joins the enclosing frame, unless `keep` answers false (a dry run,
   * an atomic import with errors): then it is rolled back the same way and `fn`'s value returned.
   */
  async savepoint<T>(fn: () => Promise<T>, options: SavepointOptions<T> = {}): Promise<T> {
    const frame = await this.#open();
    let value: T;
    let keep: boolean;
    try {
      value = await fn();
      await this.#flush(frame.pendingWrites);
      keep = options.keep?.(value) ?? true;
    } catch (error) {
      await this.#rollBack(frame);
      throw error;
    }
    if (keep) await this.#release(frame);
    else await this.#rollBack(frame);
    return value;
  }

  /**
   * Runs `fn` in a savepoint that is always rolled back and whose assignments are dropped unwritten:
   * nothing `fn` did or queued stays (read-only work inside a transaction, `api/read-only-transaction.ts`).
   */
  async discarded<T>(fn: () => Promise<T>): Promise<T> {
    const frame = await this.#open();
    try {
      return await fn();
    } finally {
      await this.#rollBack(frame);
    }
  }

  /** A unit of work of its own over transaction `trx` (read-only work started from the pool). */
  over(trx: SqlExecutor): UnitOfWork {
    return new UnitOfWork(trx, this.#flush, this.writes);
  }

  /** Writes what is still assigned (before the commit, or at the end of read-only work). */
  flush(): Promise<void> {
    return this.pendingWrites.size ? this.#flush(this.pendingWrites) : Promise.resolve();
  }

  /** Runs the after-commit jobs, in order; called once the transaction committed. */
  async committed(): Promise<void> {
    if (this.depth) throw new Error(`Unit of work committed with ${this.depth} savepoint(s) open`);
    this.#committed = true;
    const { jobs } = this.#frames[0]!;
    for (const job of jobs.splice(0)) await runJob(job);
  }

  #top(): Frame {
    return this.#frames[this.#frames.length - 1]!;
  }

  async #open(): Promise<Frame> {
    if (!this.inTransaction) throw new Error('A savepoint needs a transaction: this unit of work runs on the pool (read-only work)');
    const frame: Frame = {
      jobs: [], pendingWrites: new PendingWrites(), changes: this.recordChanges.mark(), name: `ff_savepoint_${this.#frames.length}`,
    };
    await sql`SAVEPOINT ${sql.id(frame.name)}`.execute(this.trx);
    this.#frames.push(frame);
    return frame;
  }

  #close(frame: Frame): void {
    if (this.#top() !== frame) throw new Error(`Savepoint ${frame.name} closed while an inner savepoint is open`);
    this.#frames.pop();
  }

  async #release(frame: Frame): Promise<void> {
    this.#close(frame);
    await sql`RELEASE SAVEPOINT ${sql.id(frame.name)}`.execute(this.trx);
    this.#top().jobs.push(...frame.jobs);
  }

  async #rollBack(frame: Frame): Promise<void> {
    this.#close(frame);
    this.recordChanges.restore(frame.changes!);
    await sql`ROLLBACK TO SAVEPOINT ${sql.id(frame.name)}`.execute(this.trx);
    await sql`RELEASE SAVEPOINT ${sql.id(frame.name)}`.execute(this.trx);
  }
}

async function runJob(job: AfterCommitJob): Promise<void> {
  try {
    await job();
  } catch (err) {
    console.error('after-commit job failed', err);
  }
}
