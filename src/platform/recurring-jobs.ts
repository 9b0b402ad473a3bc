/**
 * Runs the modules' recurring jobs (`orm/recurring-job.ts`) on a serving worker: every `TICK_MS`,
 * in each database this worker has open, each job of its installed modules whose interval has
 * passed — as the platform, outside any transaction, one run of a job per database at a time. A
 * failing run is logged and tried again at its next interval; the timer never keeps the process up.
 */
import { runInEnv } from '../orm/env.js';
import { makeEnv } from '../orm/transaction.js';
import type { Platform } from './platform.js';

export const TICK_MS = 2_000;

export class RecurringJobs {
  readonly #lastRun = new Map<string, number>();
  readonly #running = new Set<string>();
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly platform: Platform) {}

  start(tickMs = TICK_MS): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.tick(), tickMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** One pass over the open databases; answers once every job started by it has finished. */
  async tick(now = Date.now()): Promise<void> {
    const runs: Promise<void>[] = [];
    for (const name of this.platform.openDatabases()) {
      runs.push(this.#databaseTick(name, now).catch((err: unknown) => console.error(`recurring jobs of ${name} failed`, err)));
    }
    await Promise.all(runs);
  }

  async #databaseTick(name: string, now: number): Promise<void> {
    const registry = await this.platform.registry(name);
    const db = await this.platform.database(name);
    for (const job of registry.recurringJobs) {
      const key = `${name}\n${job.name}`;
      if (this.#running.has(key) || now - (this.#lastRun.get(key) ?? 0) < job.everyMs) continue;
      this.#lastRun.set(key, now);
      this.#running.add(key);
      const env = makeEnv(db, registry, db.executor, { su: true, files: this.platform.files, bus: this.platform.bus, changeFeed: this.platform.changeFeed });
      await runInEnv(env, job.run)
        .catch((err: unknown) => console.error(`recurring job ${job.name} of ${name} failed`, err))
        .finally(() => this.#running.delete(key));
    }
  }
}
