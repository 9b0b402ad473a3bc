/**
 * The activity feed of the caller (spec §4.10, CONTRACTS C5 "Routes"): its notified rows, counted,
 * listed newest first, and marked read. The count and the list read the rows as the caller: a
 * global rule keeps them to the caller's own contact, and a row belongs to its record
 * (`_owned_by`), so rows on records the caller can no longer read are neither counted nor listed —
 * the badge and the feed always agree (Odoo's counter drifts there: odoo #12770, #22277).
 * Marking read writes as the platform once the caller's contact is known, so "mark all" also marks
 * the rows the caller no longer sees, which then never come back unread.
 */
import { QuerySet, currentEnv, withEnv } from 'fieldforge';
import { contactOfUser } from '../thread/user-contacts.js';
import { bodyText } from '../notify/notification-payload.js';
import { sweepAfterCommit } from './retention.js';

export const DEFAULT_FEED_LIMIT = 30;
export const MAX_FEED_LIMIT = 200;

export interface FeedQuery {
  unread_only?: boolean;
  limit?: number;
  before_id?: number;
}

export interface FeedItem {
  message_id: number;
  model: string;
  document: number;
  record_name: string;
  author: { id: number; display_name: string } | null;
  /** Who wrote it when the author is no contact (a live-chat visitor); null otherwise. */
  author_name: string | null;
  body: string;
  content: string | null;
  message_type: string;
  created_date: string;
  read: boolean;
}

export type ReadScope = { model: string; document: number } | { message_id: number } | { all: true } | Record<string, never>;

function rows(): QuerySet {
  return new QuerySet(currentEnv().registry.meta('FkMessageNotifiedContact'));
}

export async function unreadCount(): Promise<number> {
  const contact = await contactOfUser(currentEnv().uid);
  if (contact === null) return 0;
  return rows().filter({ contact, read: false }).count();
}

export async function feed(query: FeedQuery): Promise<FeedItem[]> {
  const contact = await contactOfUser(currentEnv().uid);
  if (contact === null) return [];
  const filter: Record<string, unknown> = { contact };
  if (query.unread_only) filter.read = false;
  if (query.before_id !== undefined) filter.message__lt = query.before_id;
  // The page is chosen as the caller (its rows on records it may read, through the feed index);
  // its rows and messages are then read by id.
  const pageIds = await rows().filter(filter).order_by('message__id DESC').limit(query.limit ?? DEFAULT_FEED_LIMIT).ids();
  if (!pageIds.length) return [];
  const { page, messages } = await withEnv({ su: true }, async () => {
    const page = await rows().filter({ id__in: pageIds }).order_by('message__id DESC').read(['message.id', 'read']);
    const ids = page.map((r) => (r.message as { id: number }).id);
    const messages = await new QuerySet(currentEnv().registry.meta('Message')).filter({ id__in: ids })
      .read(['model', 'document', 'record_name', 'author.id', 'author.display_name', 'author_name', 'content', 'message_type', 'created_date']);
    return { page, messages };
  });
  const byId = new Map(messages.map((m) => [m.id as number, m]));
  return page.flatMap((row) => {
    const m = byId.get((row.message as { id: number }).id);
    if (!m) return [];
    return [{
      message_id: m.id as number,
      model: m.model as string,
      document: m.document as number,
      record_name: (m.record_name as string | null) ?? '',
      author: (m.author as FeedItem['author']) ?? null,
      author_name: (m.author_name as string | null) ?? null,
      body: bodyText(m.content as string | null),
      content: (m.content as string | null) ?? null,
      message_type: m.message_type as string,
      created_date: m.created_date as string,
      read: row.read === true,
    }];
  });
}

/** Turns the caller's unread rows of the scope read; answers how many it turned (C5 precision 6). */
export async function markRead(scope: ReadScope): Promise<number> {
  const contact = await contactOfUser(currentEnv().uid);
  if (contact === null) return 0;
  const filter: Record<string, unknown> = { contact, read: false };
  if ('all' in scope && scope.all === true) { /* every unread row of the caller */ }
  else if ('message_id' in scope) filter.message = scope.message_id;
  else if ('model' in scope) Object.assign(filter, { model: scope.model, document: scope.document });
  else return 0;
  const turned = await withEnv({ su: true }, () => rows().with_archived().filter(filter).update({ read: true, read_date: new Date().toISOString() }));
  if (turned) sweepAfterCommit();
  return turned;
}
