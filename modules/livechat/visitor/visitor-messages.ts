/**
 * A session's public messages as its visitor sees them (spec §6.4, C5 precision 9): `{id,
 * content, author_name, is_agent, created_date, attachments}`, oldest first. `note`s are never
 * among them. Attachment URLs are added where the platform's secret is (the visitor hub signs
 * them), so `attachments` here hold `{id, name, mimetype}`.
 */
import { QuerySet, currentEnv, withEnv, type VisitorMessage } from 'fieldforge';

export type { VisitorMessage };

/** Most messages one history frame carries (the newest of them, when a chat has more). */
export const HISTORY_LIMIT = 1_000;

type Which = { ids: readonly number[] } | { session: number; afterId: number | null };

export async function visitorMessages(which: Which): Promise<{ session_id: number; message: VisitorMessage }[]> {
  return withEnv({ su: true }, async () => {
    const messages = new QuerySet(currentEnv().registry.meta('Message'));
    const filter: Record<string, unknown> = { model: 'LiveChatSession', message_type: 'comment' };
    if ('ids' in which) filter.id__in = [...which.ids];
    else {
      filter.document = which.session;
      if (which.afterId !== null) filter.id__gt = which.afterId;
    }
    const rows = await messages.filter(filter).order_by('id DESC').limit(HISTORY_LIMIT)
      .read(['document', 'content', 'author_name', 'author.display_name', 'livechat_visitor', 'created_date', 'attachments.name', 'attachments.mimetype']);
    return rows.reverse().map((m) => ({
      session_id: m.document as number,
      message: {
        id: m.id as number,
        content: (m.content as string | null) ?? '',
        author_name: m.livechat_visitor ? ((m.author_name as string | null) || 'Visitor') : ((m.author as { display_name?: string } | null)?.display_name ?? (m.author_name as string | null) ?? ''),
        is_agent: m.livechat_visitor !== true,
        created_date: m.created_date as string,
        attachments: ((m.attachments as { id: number; name: string; mimetype: string | null }[] | null) ?? []).map(({ id, name, mimetype }) => ({ id, name, mimetype: mimetype ?? null })),
      },
    }));
  });
}
