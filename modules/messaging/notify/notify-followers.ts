/**
 * `message.notify_record_followers()` (spec §6.5 rule 1): resolves a message's audience — the
 * record's followers (not for an internal `note`) plus the contacts it @mentions, minus its author
 * — links it into `notified_contacts` and tells it, after commit: each recipient who may still read
 * the record gets the feed row, and with the `realtime` preference the socket frame and a Web Push
 * too; viewers of the record who got no frame get `record_message`. Resolving and linking is one
 * statement whatever the audience; the statements after it grow with the distinct access
 * profiles, not the people — and a request reads the recipients' memberships and profiles only
 * when the security version moved since the last (`recipient-profiles.ts`).
 * A second call links nothing new and pushes again (spec: "a second call re-pushes a duplicate").
 *
 * The cost of a message to 1,000 followers is its 1,000 rows (`bench/messaging-bench.ts`): they
 * are written without the audit user columns (the platform writes them; each set column would be
 * a foreign-key check per row, +4.5 ms per 1,000) and, for a message created in this very
 * transaction (`create_message`), without `ON CONFLICT` (nothing can be linked to it yet).
 */
import { currentEnv, send_activity_updates, send_record_viewers, sql, withEnv, type Model } from 'fieldforge';
import { SECURITY_VERSION_NOW } from '../../../src/access/security-version.js';
import type { ManyToManyField } from '../../../src/orm/fields/relational-fields.js';
import { notificationPayload } from './notification-payload.js';
import { readableBy } from './readable-recipients.js';
import { queuePushes } from '../push/outbox.js';

/** The recipients who are active users, and each one's notification preference (`preferences[k]` is `uids[k]`'s). */
interface Recipients {
  uids: number[];
  preferences: (string | null)[];
  /** The security version the statement saw. */
  version: number;
}

interface MessageValues {
  id: number;
  model: string;
  document: number;
  message_type: string;
  _values: { author?: number | null };
}

export interface NotifyOptions {
  /** The message was created in this transaction and nothing has linked it yet. */
  fresh?: boolean;
}

export async function notifyRecordFollowers(message: Model, options: NotifyOptions = {}): Promise<void> {
  const m = message as unknown as MessageValues;
  await withEnv({ su: true }, async () => {
    const { uids, preferences, version } = await linkAudience(m, options.fresh === true);
    const readable = await readableBy(m.model, m.document, uids, version);
    const payload = await notificationPayload(message);
    // `inbox` people read it in the feed: no frame, no toast, no push (CONTRACTS C5).
    const live = uids.filter((uid, k) => readable.has(uid) && (preferences[k] ?? 'realtime') === 'realtime');
    send_activity_updates(live, { ...payload });
    await queuePushes(live, { ...payload });
    send_record_viewers(m.model, m.document, { ...payload, kind: 'record_message' }, live);
  });
}

/**
 * One statement: the audience, linked (a row already there stays as it is), answered with its
 * active users and their preferences, as one row (a contact without a user is linked, not told).
 */
async function linkAudience(m: MessageValues, fresh: boolean): Promise<Recipients> {
  const { registry, work } = currentEnv();
  const followers = registry.meta('Followers');
  const junction = registry.meta('FkMessageNotifiedContact');
  const contact = registry.meta('Contact');
  const user = registry.meta('User');
  const mentions = (registry.meta('Message').fields.get('mentions') as ManyToManyField).join;
  const f = (meta: typeof followers, name: string) => sql.id(meta.fields.get(name)!.column!);
  const author = m._values.author ?? null;
  const now = new Date().toISOString();
  const followersToo = m.message_type !== 'note';
  const onConflict = fresh ? sql`` : sql`ON CONFLICT (${f(junction, 'message')}, ${f(junction, 'contact')}) DO NOTHING`;
  const { rows } = await sql<Recipients>`WITH audience AS (
      SELECT ${f(followers, 'contact')} AS contact FROM ${sql.table(followers.table)}
        WHERE ${followersToo} AND ${f(followers, 'model')} = ${m.model} AND ${f(followers, 'document')} = ${m.document}
      UNION
      SELECT ${sql.id(mentions.targetColumn)} FROM ${sql.table(mentions.table)} WHERE ${sql.id(mentions.sourceColumn)} = ${m.id}
    ), kept AS (
      SELECT contact FROM audience WHERE contact IS DISTINCT FROM ${author}::int
    ), linked AS (
      INSERT INTO ${sql.table(junction.table)}
        (${f(junction, 'message')}, ${f(junction, 'contact')}, ${f(junction, 'read')}, ${f(junction, 'model')}, ${f(junction, 'document')},
         ${f(junction, 'created_date')}, ${f(junction, 'updated_date')})
      SELECT ${m.id}::int, contact, false, ${m.model}::varchar, ${m.document}::int, ${now}::timestamptz, ${now}::timestamptz FROM kept
      ${onConflict}
    )
    SELECT COALESCE(array_agg(u.id ORDER BY u.id), '{}') AS uids, COALESCE(array_agg(u.${f(user, 'notification_preference')} ORDER BY u.id), '{}') AS preferences,
           ${SECURITY_VERSION_NOW} AS version
      FROM kept k JOIN ${sql.table(contact.table)} c ON c.id = k.contact
      JOIN ${sql.table(user.table)} u ON u.id = c.${f(contact, 'user')} AND u.${f(user, 'active')}`.execute(work.trx);
  return rows[0]!; // an aggregate without GROUP BY: always one row
}
