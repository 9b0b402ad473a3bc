/**
 * Keeping the notified rows bounded (Odoo's table grows forever until a garbage collection was
 * added: odoo PR #153247). Read rows older than `FF_MESSAGE_RETENTION_DAYS` (default 180; 0 keeps
 * them forever) are deleted; unread rows are never deleted, whatever their age — nobody loses a
 * notification they have not seen. The sweep follows marking read, at most once a minute per
 * database and worker, after the commit and in its own transaction, deleting at most
 * `SWEEP_BATCH` rows a time through the partial index on `read_date`: a sweep never holds locks
 * long, and the table stays at what people have not read plus the retention window.
 */
import { currentEnv, sql } from 'fieldforge';
import { transaction } from '../../../src/orm/transaction.js';

export const DEFAULT_RETENTION_DAYS = 180;
export const SWEEP_BATCH = 5_000;
const SWEEP_EVERY_MS = 60_000;
const lastSweep = new Map<string, number>();

/** The retention in days from `FF_MESSAGE_RETENTION_DAYS`; null: keep read rows forever (0). */
export function retentionDays(env: NodeJS.ProcessEnv = process.env): number | null {
  const raw = env.FF_MESSAGE_RETENTION_DAYS;
  if (raw === undefined || raw === '') return DEFAULT_RETENTION_DAYS;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 0) throw new Error(`FF_MESSAGE_RETENTION_DAYS must be a whole number of days (0 keeps read notifications forever), got ${JSON.stringify(raw)}`);
  return days === 0 ? null : days;
}

/** Deletes up to `SWEEP_BATCH` read rows read before `cutoff`, in the current unit of work; answers how many. */
export async function sweepReadRows(cutoff: Date): Promise<number> {
  const { registry, work } = currentEnv();
  const junction = registry.meta('FkMessageNotifiedContact');
  const read = sql.id(junction.fields.get('read')!.column!);
  const readDate = sql.id(junction.fields.get('read_date')!.column!);
  const result = await sql`DELETE FROM ${sql.table(junction.table)} WHERE id IN (
      SELECT id FROM ${sql.table(junction.table)} WHERE ${read} AND ${readDate} < ${cutoff.toISOString()}::timestamptz LIMIT ${SWEEP_BATCH})`.execute(work.trx);
  return Number(result.numAffectedRows ?? 0);
}

/** After the current unit of work commits, sweeps once if this database was not swept this minute. */
export function sweepAfterCommit(): void {
  const days = retentionDays();
  if (days === null) return;
  const { db, registry, work } = currentEnv();
  const now = Date.now();
  if (now - (lastSweep.get(db.name) ?? 0) < SWEEP_EVERY_MS) return;
  lastSweep.set(db.name, now);
  work.afterCommit(() => {
    const cutoff = new Date(Date.now() - days * 86_400_000);
    transaction(db, registry, { su: true }, () => sweepReadRows(cutoff))
      .catch((err: unknown) => console.error(`notification retention sweep of ${db.name} failed`, err));
  });
}
