import { UserError, ValidationError, currentEnv, defineModelTrait, fields, withEnv, type ModelChangeDone, type ModelClass } from 'fieldforge';
import { threadFollowers, threadMessages } from '../thread/thread-reads.js';
import { followOnChange } from '../thread/follow-on-change.js';
import { addFollowers, removeFollowers } from '../thread/follow.js';
import { callerContact } from '../thread/user-contacts.js';
import { createMessage } from '../notify/create-message.js';

const POSTED_TYPES = new Set(['comment', 'note']);
/** Largest message a person may post (characters of HTML): a long e-mail, not a file. */
export const MAX_POST_LENGTH = 100_000;

/**
 * The chatter (CONTRACTS C5 "Chatter on a model"): every model declaring `static _mail_thread =
 * true` gets a conversation per record. Posting and following are API methods on the record, so
 * `/api/execute` loads the record as the caller first: whoever may read a record may post on it
 * and follow it, nobody else (the thread itself is written as the platform).
 */
export const MailThread = defineModelTrait('mail_thread', (cls) => cls._mail_thread === true, (Base: ModelClass) => {
  const Thread = class extends Base {
    static override _api_methods = [...(Base._api_methods ?? []), 'message_post', 'message_follow', 'message_unfollow'];
    static override fields = {
      messages: fields.Json({ calculate: 'calc_messages', label: 'Messages', description: 'The thread, newest first' }),
      followers: fields.Json({ calculate: 'calc_followers', label: 'Followers' }),
    };

    async calc_messages(): Promise<unknown[]> {
      const meta = this.modelMeta();
      const all = await this.for_batch('mail_thread.messages', () => withEnv({ su: true }, () => threadMessages(meta.name, this._batch.records.map((r) => r.id))));
      return all.get(this.id) ?? [];
    }

    async calc_followers(): Promise<unknown[]> {
      const meta = this.modelMeta();
      const all = await this.for_batch('mail_thread.followers', () => withEnv({ su: true }, () => threadFollowers(meta.name, this._batch.records.map((r) => r.id))));
      return all.get(this.id) ?? [];
    }

    /** `{content, message_type?, mention_ids?}` → `{id}` of the new message, told to its audience. */
    async message_post(inputs: Record<string, unknown> = {}): Promise<{ id: number }> {
      const { content, message_type = 'comment', mention_ids = [] } = inputs;
      if (typeof content !== 'string' || !content.trim()) throw new ValidationError('content must be a non-empty string', { field: 'content' });
      if (content.length > MAX_POST_LENGTH) throw new ValidationError(`content is longer than ${MAX_POST_LENGTH} characters`, { field: 'content' });
      if (typeof message_type !== 'string' || !POSTED_TYPES.has(message_type)) {
        throw new ValidationError("message_type must be 'comment' or 'note'", { field: 'message_type' });
      }
      if (!Array.isArray(mention_ids) || mention_ids.some((id) => !Number.isSafeInteger(id) || id <= 0)) {
        throw new ValidationError('mention_ids must be a list of contact ids', { field: 'mention_ids' });
      }
      const author = await callerContact();
      if (author === null) throw new UserError('Only a signed-in user or a service account may post a message');
      const message = await createMessage({
        model: this.modelMeta().name, document: this.id, content, message_type: message_type as 'comment' | 'note', author, mention_ids: mention_ids as number[],
      });
      return { id: message.id };
    }

    /** Makes the caller's contact follow the record. */
    async message_follow(): Promise<{ following: true }> {
      const contact = await callerContact();
      if (contact === null) throw new UserError('Only a signed-in user or a service account may follow a record');
      await withEnv({ su: true }, () => addFollowers(this.modelMeta().name, [{ document: this.id, contact }]));
      return { following: true };
    }

    /** Makes the caller's contact stop following the record. */
    async message_unfollow(): Promise<{ following: false }> {
      const contact = await callerContact();
      if (contact !== null) await withEnv({ su: true }, () => removeFollowers(this.modelMeta().name, [this.id], contact));
      return { following: false };
    }

    static override async _after_change(change: ModelChangeDone): Promise<void> {
      await super._after_change?.(change);
      await followOnChange(currentEnv().registry.meta(this.modelName()), change);
    }
  };
  return Thread as unknown as ModelClass;
});
