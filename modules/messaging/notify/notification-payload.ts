/**
 * `message.notification_payload()` (spec §2.6): what a notified person is told of a message — on
 * the socket, in the feed and in a Web Push. `body` is the content as text (C5 precision 7): tags
 * removed, entities decoded, whitespace runs collapsed, trimmed, its first 140 characters with no
 * ellipsis. The text comes from an HTML parser, never from a regular expression over HTML.
 */
import { Parser } from 'htmlparser2';
import type { Model } from 'fieldforge';

export const BODY_LENGTH = 140;

export interface NotificationPayload {
  kind: 'message';
  model: string;
  document: number;
  message_id: number;
  title: string;
  body: string;
}

/** The text of `html`, collapsed and cut to `BODY_LENGTH` characters (code points, not halves of one). */
export function bodyText(html: string | null | undefined): string {
  const parts: string[] = [];
  const parser = new Parser({ ontext: (text) => parts.push(text), onopentag: () => parts.push(' '), onclosetag: () => parts.push(' ') }, { decodeEntities: true });
  parser.write(html ?? '');
  parser.end();
  const text = parts.join('').replace(/\s+/g, ' ').trim();
  return [...text].slice(0, BODY_LENGTH).join('');
}

export async function notificationPayload(message: Model): Promise<NotificationPayload> {
  const values = message as unknown as { id: number; model: string; document: number; content: string | null; author_name: string | null; author: Promise<Model | null> };
  const author = await values.author;
  return {
    kind: 'message',
    model: values.model,
    document: values.document,
    message_id: values.id,
    title: author?.display_name ?? values.author_name ?? '',
    body: bodyText(values.content),
  };
}
