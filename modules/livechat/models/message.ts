import { UserError, QuerySet, currentEnv, extendModel, fields, withEnv, type ModelChange, type ModelChangeDone, type ModelClass } from 'fieldforge';
import { publicMessagesPosted } from '../visitor/session-events.js';

const SESSION = 'LiveChatSession';

/**
 * Live chat's side of a message (CONTRACTS C5 precision 9): whether the session's visitor wrote it
 * (`livechat_visitor`: the visitor is no user and no contact, so `author` is empty and
 * `author_name` holds the visitor's name) and the files it carries. Every public message on a
 * session — the visitor's, an agent's reply, on any write path — reaches the visitor's sockets
 * and the agents' once committed; an internal `note` never reaches the visitor. Nothing more may
 * be posted on a closed session.
 */
export const MessageLiveChat = extendModel('Message', (Base: ModelClass) => {
  const Extended = class extends Base {
    static override fields = {
      livechat_visitor: fields.Boolean({ default: false, label: 'Written by the visitor' }),
      attachments: fields.ManyToMany('Attachment', { label: 'Attachments' }),
    };

    static override async _check_change(change: ModelChange): Promise<void> {
      await super._check_change?.(change);
      if (change.op !== 'create') return;
      const sessions = [...new Set(change.vals.filter((v) => v.model === SESSION).map((v) => Number(v.document)))];
      if (!sessions.length) return;
      const closed = await withEnv({ su: true }, () => new QuerySet(currentEnv().registry.meta(SESSION)).filter({ id__in: sessions, state: 'closed' }).count());
      if (closed) throw new UserError('This chat is closed: nothing more can be posted on it');
    }

    static override async _after_change(change: ModelChangeDone): Promise<void> {
      await super._after_change?.(change);
      if (change.op !== 'create') return;
      const ids = change.ids.filter((_, i) => change.vals[i]!.model === SESSION && (change.vals[i]!.message_type ?? 'comment') === 'comment');
      if (ids.length) await publicMessagesPosted(ids);
    }
  };
  return Extended as unknown as ModelClass;
});
