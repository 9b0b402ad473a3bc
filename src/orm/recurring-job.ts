/**
 * Work a module has done again and again in each database that has it, by every serving worker
 * (`fieldforge serve`): the messaging module drains the Web Push outbox rows a crash left behind.
 * A job runs as the platform, outside any transaction (it opens its own units of work), at most
 * once per `every_ms` per database and worker, and never twice at once; it must tolerate running
 * on several workers at the same time (claim rows with `FOR UPDATE SKIP LOCKED`).
 *
 * ```ts
 * export const drain = defineRecurringJob('push_outbox', 30_000, async () => { … });
 * ```
 */
export interface RecurringJob {
  readonly kind: 'recurring-job';
  readonly name: string;
  readonly everyMs: number;
  readonly run: () => Promise<void>;
}

export function defineRecurringJob(name: string, every_ms: number, run: () => Promise<void>): RecurringJob {
  if (!Number.isFinite(every_ms) || every_ms < 1_000) throw new Error(`defineRecurringJob('${name}'): every_ms must be at least 1000`);
  return { kind: 'recurring-job', name, everyMs: every_ms, run };
}

export function isRecurringJob(value: unknown): value is RecurringJob {
  return typeof value === 'object' && value !== null && (value as RecurringJob).kind === 'recurring-job';
}
