/**
 * `Message.set_notified_contacts(message, contacts, author, model, document)` (spec §6.5 rule 3,
 * C5 precision 5): links contacts as notified by a message — the rows of the feed, `read` false —
 * leaving the author out. It only links (it sends nothing), in one statement whatever the number;
 * a contact linked already stays as it is (its `read` untouched). Like the rows a message's own
 * notifying links, they carry no audit user (`notify-followers.ts`).
 */
import { currentEnv, sql, type Model } from 'fieldforge';

export type RecordsOrIds = readonly (Model | number)[];

const idOf = (value: Model | number | null | undefined): number | null =>
  value === null || value === undefined ? null : typeof value === 'number' ? value : value.id;

export async function setNotifiedContacts(
  message: Model | number, contacts: RecordsOrIds, author: Model | number | null, model: string, document: number,
): Promise<number> {
  const authorId = idOf(author);
  const ids = [...new Set(contacts.map(idOf).filter((id): id is number => id !== null && id !== authorId))];
  const messageId = idOf(message);
  if (!ids.length || messageId === null) return 0;
  const { registry, work } = currentEnv();
  const meta = registry.meta('FkMessageNotifiedContact');
  const column = (f: string) => sql.id(meta.fields.get(f)!.column!);
  const now = new Date().toISOString();
  const result = await sql`INSERT INTO ${sql.table(meta.table)}
      (${column('message')}, ${column('contact')}, ${column('read')}, ${column('model')}, ${column('document')},
       ${column('created_date')}, ${column('updated_date')})
    SELECT ${messageId}::int, c, false, ${model}::varchar, ${document}::int, ${now}::timestamptz, ${now}::timestamptz
      FROM unnest(${ids}::int[]) AS c
    ON CONFLICT (${column('message')}, ${column('contact')}) DO NOTHING`.execute(work.trx);
  return Number(result.numAffectedRows ?? 0);
}
