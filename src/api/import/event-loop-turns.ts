/**
 * Long work split into event-loop turns: one request reading a large import or upload must not
 * hold up every other request of its worker (issue 25: a 2 MB CSV once kept `/health` waiting
 * 14.7 s). The work asks `due()` often — once per row or per chunk: reading the clock costs tens
 * of nanoseconds, and no promise is made while a turn is not over — and once a turn has run
 * `TURN_MS`, awaits `next()`, which lets the event loop run its I/O and timers (`setImmediate`)
 * before the work goes on.
 *
 *     if (turns.due()) await turns.next();
 */

/** Work done between two turns given to the event loop, at most (ms), as the caller asks often. */
export const TURN_MS = 10;

export class EventLoopTurns {
  #since = performance.now();

  /** Whether this turn has run long enough. */
  due(): boolean {
    return performance.now() - this.#since >= TURN_MS;
  }

  /** Gives the event loop a turn, and starts the next one. */
  async next(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}
