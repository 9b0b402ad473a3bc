import { Model, QuerySet, UserError, currentEnv, fields, withEnv, type ModelChange, type ModelChangeDone } from 'fieldforge';
import { sessionClosed, visitorPresence, visitorTyping } from '../visitor/session-events.js';
import {
  history, markOnline, markSeen, openSessionOf, postAttachment, postMessage, sessionByToken, startSession,
  type OpenSession, type PostedFile, type StartedSession, type VisitorHistory,
} from '../visitor/visitor-session.js';

/**
 * A visitor's conversation with the agents (spec §2.6, CONTRACTS C5 "Live chat"): a `_mail_thread`
 * record whose public messages are the chat. The visitor holds a bearer token of which only the
 * SHA-256 is stored (`token_hash`, never readable through the API); it reaches the visitor routes and
 * socket only (`visitor/`), which act as the platform on the visitor's behalf. Agents
 * (`livechat.group_agent`) read the sessions, reply with `message_post` and close them.
 */
export class LiveChatSession extends Model {
  static override _verbose_name = 'Live Chat Session';
  static override _order_by = ['id DESC'];
  static override _rec_name = 'visitor_name';
  static override _mail_thread = true;
  static override _api_methods = ['close_session'];
  static override fields = {
    visitor_name: fields.Char({ max_length: 120, required: true, default: 'Visitor', label: 'Visitor' }),
    visitor_email: fields.Char({ max_length: 255, label: 'Email' }),
    token_hash: fields.Char({ max_length: 64, required: true, internal: true, index: true }),
    state: fields.Selection({ choices: [['open', 'Open'], ['closed', 'Closed']], default: 'open', required: true, label: 'State' }),
    agent: fields.ManyToOne('User', { on_delete: 'SET NULL', label: 'Agent' }),
    last_seen: fields.Datetime({ label: 'Last seen', readonly: true }),
    visitor_online: fields.Boolean({ default: false, label: 'Online', readonly: true }),
  };

  declare visitor_name: string;
  declare visitor_email: string | null;
  declare state: 'open' | 'closed';

  // The visitor's side, called by the platform's live-chat routes and socket (`src/api/livechat.ts`)
  // with a session whose token they checked; not API methods.
  static visitor_start(name: unknown, email: unknown): Promise<StartedSession> {
    return startSession(name, email);
  }

  static visitor_session(token: unknown): Promise<OpenSession | null> {
    return sessionByToken(token);
  }

  static visitor_open_session(token: unknown): Promise<OpenSession> {
    return openSessionOf(token);
  }

  static visitor_post(session: OpenSession, content: unknown): Promise<{ id: number }> {
    return postMessage(session, content);
  }

  static visitor_attach(session: OpenSession, name: unknown, base64: unknown, mimetype: unknown): Promise<PostedFile> {
    return postAttachment(session, name, base64, mimetype);
  }

  static visitor_history(id: number, afterId: number | null): Promise<VisitorHistory> {
    return history(id, afterId);
  }

  static visitor_seen(ids: readonly number[]): Promise<void> {
    return withEnv({ su: true }, () => markSeen(ids));
  }

  /** Sessions came online or went offline (over every worker): stored, and their agents told. */
  static visitor_presence(changes: readonly { id: number; online: boolean }[]): Promise<void> {
    return withEnv({ su: true }, async () => {
      await markOnline(changes);
      await visitorPresence(changes);
    });
  }

  static visitor_typing(ids: readonly number[]): Promise<void> {
    return withEnv({ su: true }, () => visitorTyping(ids));
  }

  /** Ends the chat: the visitor is told, and neither side may post on it any more. */
  async close_session(): Promise<{ state: 'closed' }> {
    if (this.state === 'closed') return { state: 'closed' };
    await this.write({ state: 'closed' });
    return { state: 'closed' };
  }

  static override async _check_change(change: ModelChange): Promise<void> {
    await super._check_change?.(change);
    if (change.op !== 'write' || change.vals.state !== 'open') return;
    const closed = await withEnv({ su: true }, () => new QuerySet(currentEnv().registry.meta('LiveChatSession')).filter({ id__in: [...change.ids], state: 'closed' }).count());
    if (closed) throw new UserError('A closed chat cannot be opened again: the visitor starts a new one');
  }

  static override async _after_change(change: ModelChangeDone): Promise<void> {
    await super._after_change?.(change);
    if (change.op === 'write' && change.vals.state === 'closed') sessionClosed(change.ids);
  }
}
