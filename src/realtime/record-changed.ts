/**
 * Record-changed pings (spec §6.3, CONTRACTS C4): the realtime side of the ORM's change feed
 * (`orm/record-changes.ts`). The write path asks `isWatched` — the bus's per-database gate — and,
 * once a unit of work that changed watched-for records has committed, `publish` names its editor
 * and sends the records over the bus, many to a message; each worker's hub hands every record's
 * `record_changed` frame to the sockets watching it, except those of the editing session.
 * Publishing happens after the commit and is not awaited: the write never waits for it.
 */
import type { CommittedChanges, RecordChangeFeed } from '../orm/record-changes.js';
import { runInEnv } from '../orm/env.js';
import { makeEnv } from '../orm/transaction.js';
import { QuerySet } from '../orm/queryset.js';
import type { Bus, WatchedChange } from './bus.js';

/** Records per bus message (a bulk update of thousands is a few messages, not thousands). */
const RECORDS_PER_MESSAGE = 500;

export function recordChangeFeed(bus: Bus): RecordChangeFeed {
  return {
    isWatched: (db) => bus.watchGate.isLit(db),
    publish: (changes) => {
      publishChanges(bus, changes).catch((err: unknown) => console.error('record-changed pings failed', err));
    },
  };
}

async function publishChanges(bus: Bus, changes: CommittedChanges): Promise<void> {
  const updatedBy = changes.uid === null ? null : { id: changes.uid, display_name: await userName(changes, changes.uid) };
  const records: WatchedChange[] = changes.records.map((r) => ({ model: r.model, id: r.id, fields: r.fields, updated_date: r.updatedDate }));
  for (let i = 0; i < records.length; i += RECORDS_PER_MESSAGE) {
    bus.publish({
      db: changes.db.name,
      to: { watchers: records.slice(i, i + RECORDS_PER_MESSAGE), exceptSession: changes.sessionId },
      frame: { type: 'activity_update', data: { kind: 'record_changed', updated_by: updatedBy } },
    });
  }
}

/** The editor's display name, read once the write is committed (as the platform: it is only a label). */
async function userName(changes: CommittedChanges, uid: number): Promise<string> {
  const env = makeEnv(changes.db, changes.registry, changes.db.executor, { su: true });
  const [user] = await runInEnv(env, () => new QuerySet(changes.registry.meta('User')).with_archived().filter({ id: uid }).read(['display_name']));
  return String(user?.display_name ?? '');
}
