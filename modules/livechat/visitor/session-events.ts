/**
 * What the live chat tells, once committed: a public message on a session goes to the visitor's
 * sockets (`{type: 'message', message}`, spec §6.4) and to the agents following the session
 * (`realtime_data` `livechat_message`, C5 precision 9); a closed session tells its visitor
 * (`{type: 'closed'}`); the visitor's typing and presence reach the agents.
 */
import { send_livechat_visitor, send_realtime } from 'fieldforge';
import { sessionAgents } from './session-agents.js';
import { visitorMessages } from './visitor-messages.js';

/** Messages `ids` (public, on sessions) were written: the visitor and the agents are told after commit. */
export async function publicMessagesPosted(ids: readonly number[]): Promise<void> {
  const messages = await visitorMessages({ ids });
  if (!messages.length) return;
  const agents = await sessionAgents([...new Set(messages.map((m) => m.session_id))]);
  for (const { session_id, message } of messages) {
    send_livechat_visitor(session_id, { type: 'message', message });
    for (const uid of agents.get(session_id)?.users ?? []) send_realtime(uid, 'livechat_message', { session_id, message });
  }
}

export function sessionClosed(ids: readonly number[]): void {
  for (const id of ids) send_livechat_visitor(id, { type: 'closed' });
}

/** The visitors of sessions `ids` are typing: their agents see "… is typing". */
export async function visitorTyping(ids: readonly number[]): Promise<void> {
  const agents = await sessionAgents(ids);
  for (const id of ids) {
    const session = agents.get(id);
    for (const uid of session?.users ?? []) send_realtime(uid, 'livechat_typing', { session_id: id, visitor_name: session!.visitorName });
  }
}

/** Visitors came online or went offline (over every worker): their sessions' agents are told. */
export async function visitorPresence(changes: readonly { id: number; online: boolean }[]): Promise<void> {
  const agents = await sessionAgents(changes.map((c) => c.id));
  for (const { id, online } of changes) {
    for (const uid of agents.get(id)?.users ?? []) send_realtime(uid, 'livechat_presence', { session_id: id, online });
  }
}
