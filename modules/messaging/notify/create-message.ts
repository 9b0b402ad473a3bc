/**
 * `Message.create_message({model, document, content, message_type?, author?, mention_ids?, send?})`
 * (spec §6.5 rule 2, C5 precision 5): writes a message on a record and, with `send` (the default),
 * notifies its audience — no extra call. The author defaults to the caller's contact; the record's
 * name is kept on the message for the feed. Server-side API: module code is trusted, so it writes
 * as the platform; who may post from outside is decided by `message_post` (`mail-thread.ts`).
 */
import { BadRequest, NotFound, QuerySet, ValidationError, currentEnv, withEnv, type Model } from 'fieldforge';
import { callerContact } from '../thread/user-contacts.js';
import { notifyRecordFollowers } from './notify-followers.js';

export interface CreateMessageOptions {
  model: string;
  document: number;
  content: string;
  message_type?: 'comment' | 'note' | 'notification';
  /** A Contact (record or id); the caller's contact when absent. */
  author?: Model | number | null;
  /** Who wrote it when the author is no contact (a live-chat visitor). */
  author_name?: string | null;
  /** Contacts @mentioned (ids). */
  mention_ids?: readonly number[];
  send?: boolean;
}

const TYPES = new Set(['comment', 'note', 'notification']);

export async function createMessage(options: CreateMessageOptions): Promise<Model> {
  const { model, document, content, message_type = 'comment', send = true } = options ?? ({} as CreateMessageOptions);
  const { registry } = currentEnv();
  if (typeof model !== 'string' || !registry.has(model)) throw new BadRequest(`create_message: model must name a model of this database, got ${JSON.stringify(model)?.slice(0, 80)}`);
  if (!Number.isSafeInteger(document) || document <= 0) throw new BadRequest('create_message: document must be a record id');
  if (typeof content !== 'string') throw new ValidationError('content must be a string', { field: 'content' });
  if (!TYPES.has(message_type)) throw new ValidationError("message_type must be 'comment', 'note' or 'notification'", { field: 'message_type' });
  const mentions = [...new Set(options.mention_ids ?? [])];
  if (mentions.some((id) => !Number.isSafeInteger(id) || id <= 0)) throw new ValidationError('mention_ids must be contact ids', { field: 'mention_ids' });
  const author = options.author === undefined ? await callerContact() : typeof options.author === 'number' || options.author === null ? options.author : options.author.id;
  return withEnv({ su: true }, async () => {
    const [record] = await new QuerySet(registry.meta(model)).with_archived().filter({ id: document }).read(['display_name']);
    if (!record) throw new NotFound(`${model} ${document} does not exist`);
    const Message = registry.meta('Message').cls;
    const message = await Message.create({
      model, document, content, message_type, author, record_name: String(record.display_name ?? '').slice(0, 255),
      ...(options.author_name ? { author_name: String(options.author_name).slice(0, 120) } : {}),
      // No mentions, no relation written: the INSERT's RETURNING is then the record, not re-read.
      ...(mentions.length ? { mentions } : {}),
    });
    if (send) await notifyRecordFollowers(message, { fresh: true });
    return message;
  });
}
