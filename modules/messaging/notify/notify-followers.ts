/**
 * `message.notify_record_followers()` (spec §6.5 rule 1): resolves a message's audience — the
 * record's followers (not for an internal `note`) plus the contacts it @mentions, minus its author
 * — links it into `notified_contacts` and tells it, after commit: each recipient who may still read
 * the record gets the feed row, and with the `realtime` preference the socket frame and a Web Push
 * too; viewers of the record who got no frame get `record_message`. Resolving and linking is one statement whatever
 * the audience; the statements after it grow with the distinct access profiles, not the people.
 * A second call links nothing new and pushes again (spec: "a second call re-pushes a duplicate").
 */
import { currentEnv, send_activity_updates, send_record_viewers, sql, withEnv, type Model } from 'fieldforge';
import type { ManyToManyField } from '../../../src/orm/fields/relational-fields.js';
import { notificationPayload } from './notification-payload.js';
import { readableBy } from './readable-recipients.js';
import { queuePushes } from '../push/outbox.js';

interface Recipient {
  contact: number;
  uid: number | null;
  preference: string | null;
}

interface MessageValues {
  id: number;
  model: string;
  document: number;
  message_type: string;
  _values: { author?: number | null };
}

export async function notifyRecordFollowers(message: Model): Promise<void> {
  const m = message as unknown as MessageValues;
  await withEnv({ su: true }, async () => {
    const recipients = await linkAudience(m);
    const people = recipients.filter((r): r is Recipient & { uid: number } => r.uid !== null);
    const readable = await readableBy(m.model, m.document, people.map((r) => r.uid));
    const told = people.filter((r) => readable.has(r.uid));
    const payload = await notificationPayload(message);
    // `inbox` people read it in the feed: no frame, no toast, no push (CONTRACTS C5).
    const live = told.filter((r) => (r.preference ?? 'realtime') === 'realtime').map((r) => r.uid);
    send_activity_updates(live, { ...payload });
    await queuePushes(live, { ...payload });
    send_record_viewers(m.model, m.document, { ...payload, kind: 'record_message' }, live);
  });
}

/**
 * One statement: the audience, linked (a row already there stays as it is), answered with each
 * recipient's user and notification preference (a contact without a user is linked, not told).
 */
async function linkAudience(m: MessageValues): Promise<Recipient[]> {
  const { registry, work, uid } = currentEnv();
  const followers = registry.meta('Followers');
  const junction = registry.meta('FkMessageNotifiedContact');
  const contact = registry.meta('Contact');
  const user = registry.meta('User');
  const mentions = (registry.meta('Message').fields.get('mentions') as ManyToManyField).join;
  const f = (meta: typeof followers, name: string) => sql.id(meta.fields.get(name)!.column!);
  const author = m._values.author ?? null;
  const now = new Date().toISOString();
  const followersToo = m.message_type !== 'note';
  const { rows } = await sql<Recipient>`WITH audience AS (
      SELECT ${f(followers, 'contact')} AS contact FROM ${sql.table(followers.table)}
        WHERE ${followersToo} AND ${f(followers, 'model')} = ${m.model} AND ${f(followers, 'document')} = ${m.document}
      UNION
      SELECT ${sql.id(mentions.targetColumn)} FROM ${sql.table(mentions.table)} WHERE ${sql.id(mentions.sourceColumn)} = ${m.id}
    ), kept AS (
      SELECT contact FROM audience WHERE contact IS DISTINCT FROM ${author}::int
    ), linked AS (
      INSERT INTO ${sql.table(junction.table)}
        (${f(junction, 'message')}, ${f(junction, 'contact')}, ${f(junction, 'read')}, ${f(junction, 'model')}, ${f(junction, 'document')},
         ${f(junction, 'created_date')}, ${f(junction, 'created_by')}, ${f(junction, 'updated_date')}, ${f(junction, 'updated_by')})
      SELECT ${m.id}::int, contact, false, ${m.model}::varchar, ${m.document}::int, ${now}::timestamptz, ${uid}::int, ${now}::timestamptz, ${uid}::int FROM kept
      ON CONFLICT (${f(junction, 'message')}, ${f(junction, 'contact')}) DO NOTHING
    )
    SELECT k.contact, u.id AS uid, u.${f(user, 'notification_preference')} AS preference
      FROM kept k JOIN ${sql.table(contact.table)} c ON c.id = k.contact
      LEFT JOIN ${sql.table(user.table)} u ON u.id = c.${f(contact, 'user')} AND u.${f(user, 'active')}
     ORDER BY k.contact`.execute(work.trx);
  return rows;
}
