/**
 * Whether the caller may watch a record for changes (spec §6.3): exactly when it may read it —
 * rights, record rules and company isolation as for `/api/fetch` — so a watch reveals nothing a
 * read would not. A record the caller cannot see is as absent as a missing one (`NotFound`).
 *
 * Asked for it, the check also answers the record's state as the caller reads it now, which the
 * socket compares a little later to catch up on a write a stale gate did not report
 * (CONTRACTS C4 "Record-changed pings").
 */
import { currentEnv } from '../orm/env.js';
import { AUDIT_FIELDS } from '../orm/generic-fields.js';
import { fetchRecord } from './record-reads.js';

/** A watched record as read at one moment: its `updated_date`, its editor and its other stored values. */
export interface WatchedState {
  readonly updatedDate: string | null;
  readonly updatedBy: unknown;
  /** Stored, non-computed fields of the default read, audit columns excluded. */
  readonly values: Readonly<Record<string, unknown>>;
}

const AUDIT = new Set<string>(AUDIT_FIELDS);

export async function assertWatchable(model: string, id: number): Promise<void> {
  await fetchRecord(currentEnv().registry.meta(model), id, ['id']);
}

/** `assertWatchable`, answering the record's state. */
export async function watchedState(model: string, id: number): Promise<WatchedState> {
  const meta = currentEnv().registry.meta(model);
  const record = await fetchRecord(meta, id);
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    const field = meta.fields.get(name);
    if (field && field.isStored && !field.isComputed && !AUDIT.has(name)) values[name] = value;
  }
  const updated = record.updated_date;
  return { updatedDate: typeof updated === 'string' ? updated : null, updatedBy: record.updated_by ?? null, values };
}
