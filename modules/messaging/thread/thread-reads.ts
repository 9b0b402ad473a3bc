/**
 * The `messages` and `followers` of `_mail_thread` records (C5 precision 1), read for every record
 * of a batch at once: reading the thread of 50 tasks is one statement, not 50. The caller may read
 * the records (the read that asks for these fields checked it); their threads are read as the
 * platform. A record shows its newest `THREAD_LIMIT` messages. Where a module gives messages
 * `attachments` (the live chat's visitor files), each message lists its files too: one more
 * statement for the whole batch.
 */
import { QuerySet, currentEnv, sql } from 'fieldforge';

export const THREAD_LIMIT = 200;

export interface ThreadMessage {
  id: number;
  author: { id: number; display_name: string } | null;
  /** Who wrote it when the author is no contact (a live-chat visitor). */
  author_name: string | null;
  content: string | null;
  message_type: string;
  created_date: string;
  /** The message's files, where messages have any (`attachments`). */
  attachments?: { id: number; name: string; mimetype: string | null }[];
}

export interface ThreadFollower {
  id: number;
  contact: { id: number; display_name: string };
  /** The contact's user, when it has one (the client finds "me" with it). */
  user_id: number | null;
}

export async function threadMessages(model: string, ids: readonly number[]): Promise<Map<number, ThreadMessage[]>> {
  const { registry, work } = currentEnv();
  const message = registry.meta('Message');
  const contact = registry.meta('Contact');
  const c = (name: string) => sql.id('m', message.fields.get(name)!.column!);
  const { rows } = await sql<ThreadMessage & { document: number; author_id: number | null; author_name: string | null; author_name_given: string | null }>`SELECT * FROM (
      SELECT m.id, ${c('document')} AS document, ${c('author_name')} AS author_name_given, ${c('content')} AS content, ${c('message_type')} AS message_type, ${c('created_date')} AS created_date,
             a.id AS author_id, a.${sql.id(contact.fields.get('name')!.column!)} AS author_name,
             row_number() OVER (PARTITION BY ${c('document')} ORDER BY m.id DESC) AS position
        FROM ${sql.table(message.table)} m LEFT JOIN ${sql.table(contact.table)} a ON a.id = ${c('author')}
       WHERE ${c('model')} = ${model} AND ${c('document')} = ANY(${[...ids]}::int[])) t
    WHERE position <= ${THREAD_LIMIT} ORDER BY id DESC`.execute(work.trx);
  const out = new Map<number, ThreadMessage[]>();
  for (const r of rows) {
    const list = out.get(r.document) ?? out.set(r.document, []).get(r.document)!;
    list.push({
      id: r.id,
      author: r.author_id === null ? null : { id: r.author_id, display_name: r.author_name ?? '' },
      author_name: r.author_name_given,
      content: r.content,
      message_type: r.message_type,
      created_date: new Date(r.created_date).toISOString(),
    });
  }
  if (message.fields.has('attachments') && rows.length) await addAttachments([...out.values()].flat());
  return out;
}

async function addAttachments(messages: ThreadMessage[]): Promise<void> {
  const rows = await new QuerySet(currentEnv().registry.meta('Message')).filter({ id__in: messages.map((m) => m.id) })
    .read(['attachments.name', 'attachments.mimetype']);
  const files = new Map(rows.map((r) => [r.id as number, (r.attachments as { id: number; name: string; mimetype: string | null }[] | null) ?? []]));
  for (const m of messages) {
    const list = files.get(m.id) ?? [];
    m.attachments = list.map(({ id, name, mimetype }) => ({ id, name, mimetype: mimetype ?? null }));
  }
}

export async function threadFollowers(model: string, ids: readonly number[]): Promise<Map<number, ThreadFollower[]>> {
  const { registry, work } = currentEnv();
  const followers = registry.meta('Followers');
  const contact = registry.meta('Contact');
  const f = (name: string) => sql.id('f', followers.fields.get(name)!.column!);
  const { rows } = await sql<{ id: number; document: number; contact_id: number; name: string; user_id: number | null }>`SELECT f.id, ${f('document')} AS document,
      c.id AS contact_id, c.${sql.id(contact.fields.get('name')!.column!)} AS name, c.${sql.id(contact.fields.get('user')!.column!)} AS user_id
    FROM ${sql.table(followers.table)} f JOIN ${sql.table(contact.table)} c ON c.id = ${f('contact')}
    WHERE ${f('model')} = ${model} AND ${f('document')} = ANY(${[...ids]}::int[]) ORDER BY f.id`.execute(work.trx);
  const out = new Map<number, ThreadFollower[]>();
  for (const r of rows) {
    const list = out.get(r.document) ?? out.set(r.document, []).get(r.document)!;
    list.push({ id: r.id, contact: { id: r.contact_id, display_name: r.name }, user_id: r.user_id });
  }
  return out;
}
