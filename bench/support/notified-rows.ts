/**
 * Fills a database with notified rows for the feed's index test and bench: `rows` rows spread over
 * 200 other contacts (nearly all read, as a busy database's are), plus the reader's own unread and
 * read rows on the newest messages. Set-based SQL (generate_series), so a million rows take seconds.
 */
import { currentEnv, sql } from '../../src/index.js';

export interface SeedOptions {
  rows: number;
  reader: number;
  readerUnread: number;
  readerRead: number;
  model: string;
  document: number;
}

const OTHERS = 200;

export async function seedNotifiedRows(target: { run<T>(fn: () => Promise<T>): Promise<T> }, o: SeedOptions): Promise<void> {
  await target.run(async () => {
    const { registry, work } = currentEnv();
    const contact = registry.meta('Contact');
    const message = registry.meta('Message');
    const junction = registry.meta('FkMessageNotifiedContact');
    const c = (meta: typeof contact, f: string) => sql.id(meta.fields.get(f)!.column!);
    const messages = Math.ceil(o.rows / OTHERS);
    const { rows: others } = await sql<{ id: number }>`INSERT INTO ${sql.table(contact.table)} (${c(contact, 'name')}, ${c(contact, 'active')}, ${c(contact, 'is_company')}, created_date, updated_date)
      SELECT 'Seed contact ' || i, true, false, now(), now() FROM generate_series(1, ${OTHERS}) i RETURNING id`.execute(work.trx);
    const first = others[0]!.id;
    await sql`INSERT INTO ${sql.table(message.table)} (${c(message, 'model')}, ${c(message, 'document')}, ${c(message, 'content')}, ${c(message, 'message_type')},
        ${c(message, 'author')}, ${c(message, 'record_name')}, created_date, updated_date)
      SELECT ${o.model}, ${o.document}, '<p>Seed message ' || i || '</p>', 'comment', ${first}::int, 'Seed', now(), now() FROM generate_series(1, ${messages}) i`.execute(work.trx);
    const j = (f: string) => c(junction, f);
    await sql`INSERT INTO ${sql.table(junction.table)} (${j('message')}, ${j('contact')}, ${j('read')}, ${j('read_date')}, ${j('model')}, ${j('document')}, created_date, updated_date)
      SELECT m.id, k.id, (random() > 0.02), now(), ${o.model}, ${o.document}, now(), now()
        FROM (SELECT id FROM ${sql.table(message.table)} ORDER BY id DESC LIMIT ${messages}) m
        CROSS JOIN (SELECT id FROM ${sql.table(contact.table)} WHERE id = ANY(${others.map((r) => r.id)}::int[])) k
       LIMIT ${o.rows}`.execute(work.trx);
    await sql`UPDATE ${sql.table(junction.table)} SET ${j('read_date')} = NULL WHERE NOT ${j('read')}`.execute(work.trx);
    const own = o.readerUnread + o.readerRead;
    await sql`INSERT INTO ${sql.table(junction.table)} (${j('message')}, ${j('contact')}, ${j('read')}, ${j('read_date')}, ${j('model')}, ${j('document')}, created_date, updated_date)
      SELECT m.id, ${o.reader}::int, m.n > ${o.readerUnread}, CASE WHEN m.n > ${o.readerUnread} THEN now() END, ${o.model}, ${o.document}, now(), now()
        FROM (SELECT id, row_number() OVER (ORDER BY id DESC) AS n FROM ${sql.table(message.table)} ORDER BY id DESC LIMIT ${own}) m`.execute(work.trx);
  });
}
