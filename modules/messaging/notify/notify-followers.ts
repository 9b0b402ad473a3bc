/**
 * `message.notify_record_followers()` (spec §6.5 rule 1): resolves a message's audience — the
 * record's followers (not for an internal `note`) plus the contacts it @mentions, minus its author
 * — links it into `notified_contacts` and tells it, after commit: each recipient who may still read
 * the record gets the feed row, and with the `realtime` preference the socket frame and a Web Push
 * too; viewers of the record who got no frame get `record_message`. Resolving, linking and reading
 * the recipients' memberships is one statement whatever the audience; the statements after it
 * grow with the distinct access profiles, not the people.
 * A second call links nothing new and pushes again (spec: "a second call re-pushes a duplicate").
 *
 * The cost of a message to 1,000 followers is its 1,000 rows (`bench/messaging-bench.ts`): they
 * are written without the audit user columns (the platform writes them; each set column would be
 * a foreign-key check per row, +4.5 ms per 1,000) and, for a message created in this very
 * transaction (`create_message`), without `ON CONFLICT` (nothing can be linked to it yet).
 */
import { currentEnv, send_activity_updates, send_record_viewers, sql, withEnv, type Model } from 'fieldforge';
import type { ManyToManyField } from '../../../src/orm/fields/relational-fields.js';
import { notificationPayload } from './notification-payload.js';
import { readableBy, type MembershipGroup } from './readable-recipients.js';
import { queuePushes } from '../push/outbox.js';

/** Recipients who are active users, grouped by their memberships; `preferences[k]` is `uids[k]`'s. */
interface RecipientGroup extends MembershipGroup {
  preferences: (string | null)[];
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
    const groups = await linkAudience(m, options.fresh === true);
    const readable = await readableBy(m.model, m.document, groups);
    const payload = await notificationPayload(message);
    // `inbox` people read it in the feed: no frame, no toast, no push (CONTRACTS C5).
    const live = groups.flatMap((g) => g.uids.filter((uid, k) => readable.has(uid) && (g.preferences[k] ?? 'realtime') === 'realtime'));
    send_activity_updates(live, { ...payload });
    await queuePushes(live, { ...payload });
    send_record_viewers(m.model, m.document, { ...payload, kind: 'record_message' }, live);
  });
}

/**
 * One statement: the audience, linked (a row already there stays as it is), answered with its
 * active users grouped by their groups and companies (a contact without a user is linked, not told).
 */
async function linkAudience(m: MessageValues, fresh: boolean): Promise<RecipientGroup[]> {
  const { registry, work } = currentEnv();
  const followers = registry.meta('Followers');
  const junction = registry.meta('FkMessageNotifiedContact');
  const contact = registry.meta('Contact');
  const user = registry.meta('User');
  const mentions = (registry.meta('Message').fields.get('mentions') as ManyToManyField).join;
  const groups = (user.fields.get('groups') as ManyToManyField).join;
  const companies = (user.fields.get('companies') as ManyToManyField).join;
  const f = (meta: typeof followers, name: string) => sql.id(meta.fields.get(name)!.column!);
  const author = m._values.author ?? null;
  const now = new Date().toISOString();
  const followersToo = m.message_type !== 'note';
  const onConflict = fresh ? sql`` : sql`ON CONFLICT (${f(junction, 'message')}, ${f(junction, 'contact')}) DO NOTHING`;
  const { rows } = await sql<RecipientGroup>`WITH audience AS (
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
    ), people AS (
      SELECT u.id AS uid, u.${f(user, 'notification_preference')} AS preference, u.${f(user, 'company')} AS company
        FROM kept k JOIN ${sql.table(contact.table)} c ON c.id = k.contact
        JOIN ${sql.table(user.table)} u ON u.id = c.${f(contact, 'user')} AND u.${f(user, 'active')}
    ), their_groups AS (
      SELECT ${sql.id(groups.sourceColumn)} AS uid, array_agg(${sql.id(groups.targetColumn)} ORDER BY ${sql.id(groups.targetColumn)}) AS ids
        FROM ${sql.table(groups.table)} WHERE ${sql.id(groups.sourceColumn)} IN (SELECT uid FROM people) GROUP BY 1
    ), their_companies AS (
      SELECT uid, array_agg(company ORDER BY company) AS ids FROM (
        SELECT ${sql.id(companies.sourceColumn)} AS uid, ${sql.id(companies.targetColumn)} AS company
          FROM ${sql.table(companies.table)} WHERE ${sql.id(companies.sourceColumn)} IN (SELECT uid FROM people)
        UNION SELECT uid, company FROM people WHERE company IS NOT NULL) AS allowed GROUP BY 1
    )
    SELECT array_agg(p.uid ORDER BY p.uid) AS uids, array_agg(p.preference ORDER BY p.uid) AS preferences,
           COALESCE(g.ids, '{}') AS groups, COALESCE(co.ids, '{}') AS companies
      FROM people p LEFT JOIN their_groups g ON g.uid = p.uid LEFT JOIN their_companies co ON co.uid = p.uid
     GROUP BY 3, 4`.execute(work.trx);
  return rows;
}
