import { currentEnv, defineInstallHook, defineRecurringJob, sql } from 'fieldforge';
import { ensureVapidKeys } from '../push/vapid-keys.js';
import { drainDue } from '../push/outbox.js';
import { ensureUserContacts } from '../thread/user-contacts.js';

/**
 * At each install and upgrade of messaging: users who existed before it get their contact, and
 * the indexes the feed's queries need exist — partial and multi-column, which field declarations
 * do not express. With a million notified rows, the unread count reads only the caller's unread
 * rows (`…_unread`), the feed one page of the caller's rows (the unique
 * `…_contact_id_message_id_uniq` of `_unique_together`), and the retention sweep only read rows
 * (`…_read_date`). The database's Web Push key is generated the first time.
 */
export const install = defineInstallHook(async () => {
  await ensureUserContacts();
  await ensureVapidKeys();
  const { registry, work } = currentEnv();
  const junction = registry.meta('FkMessageNotifiedContact');
  const message = registry.meta('Message');
  const j = (name: string) => sql.id(junction.fields.get(name)!.column!);
  const m = (name: string) => sql.id(message.fields.get(name)!.column!);
  const table = sql.table(junction.table);
  for (const statement of [
    // The caller's unread rows, newest first, with their record: the count checks each row's
    // record from the index alone, and marking a record's rows read finds them there.
    sql`CREATE INDEX IF NOT EXISTS ${sql.id(`${junction.table}_unread`)} ON ${table} (${j('contact')}, ${j('message')} DESC)
      INCLUDE (${j('model')}, ${j('document')}) WHERE ${j('read')} IS NOT TRUE`,
    // Superseded by the unique (contact, message) index, which serves the feed page and the
    // contact's key: each index is written for every notified row (a database from before keeps them).
    sql`DROP INDEX IF EXISTS ${sql.id(`${junction.table}_feed`)}`,
    sql`DROP INDEX IF EXISTS ${sql.id(`${junction.table}_message_id_contact_id_uniq`)}`,
    sql`DROP INDEX IF EXISTS ${sql.id(`${junction.table}_contact_id_idx`)}`,
    sql`DROP INDEX IF EXISTS ${sql.id(`${junction.table}_record`)}`, // `…_unread` includes the record
    sql`CREATE INDEX IF NOT EXISTS ${sql.id(`${junction.table}_read_date`)} ON ${table} (${j('read_date')}) WHERE ${j('read')}`,
    sql`CREATE INDEX IF NOT EXISTS ${sql.id(`${message.table}_thread`)} ON ${sql.table(message.table)} (${m('model')}, ${m('document')}, id DESC)`,
  ]) await statement.execute(work.trx);
});

/** Sends the Web Push rows a crash left behind, and the retries that are due (`push/outbox.ts`). */
export const drainPushOutbox = defineRecurringJob('messaging.push_outbox', 15_000, drainDue);
