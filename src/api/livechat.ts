/**
 * The live chat as the model service offers it (spec §4.10, §5, CONTRACTS C5 "Live chat"): the
 * visitor routes' and socket's operations, handed to the livechat module's `LiveChatSession`, which
 * exists only where that module is installed. The visitor is anonymous: these run as the platform,
 * each with the session its token opened (a bad, closed or other database's token → 401).
 */
import { BadRequest, NotFound } from '../errors.js';
import { currentEnv } from '../orm/env.js';

export interface VisitorSession {
  id: number;
  state: 'open' | 'closed';
  visitor_name: string;
}

export interface VisitorAttachment {
  id: number;
  name: string;
  mimetype: string | null;
  url?: string;
}

export interface VisitorMessage {
  id: number;
  content: string;
  author_name: string;
  is_agent: boolean;
  created_date: string;
  attachments: VisitorAttachment[];
}

export interface VisitorHistory {
  messages: VisitorMessage[];
  state: 'open' | 'closed';
  agents_online: boolean;
}

interface LiveChatModel {
  visitor_start(name: unknown, email: unknown): Promise<{ session_id: number; token: string; agents_online: boolean }>;
  visitor_session(token: unknown): Promise<VisitorSession | null>;
  visitor_open_session(token: unknown): Promise<VisitorSession>;
  visitor_post(session: VisitorSession, content: unknown): Promise<{ id: number }>;
  visitor_attach(session: VisitorSession, name: unknown, base64: unknown, mimetype: unknown): Promise<{ id: number; message_id: number; name: string; mimetype: string | null }>;
  visitor_history(id: number, afterId: number | null): Promise<VisitorHistory>;
  visitor_seen(ids: readonly number[]): Promise<void>;
  visitor_presence(changes: readonly { id: number; online: boolean }[]): Promise<void>;
  visitor_typing(ids: readonly number[]): Promise<void>;
}

export function liveChat(): LiveChatModel {
  const { registry } = currentEnv();
  if (!registry.has('LiveChatSession')) throw new NotFound('The live chat needs the livechat module, which is not installed in this database');
  return registry.meta('LiveChatSession').cls as unknown as LiveChatModel;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new BadRequest('The body must be a JSON object');
  return body as Record<string, unknown>;
}

export function startVisitorSession(body: unknown): ReturnType<LiveChatModel['visitor_start']> {
  const b = objectBody(body);
  return liveChat().visitor_start(b.name, b.email);
}

export async function postVisitorMessage(body: unknown): Promise<{ id: number }> {
  const b = objectBody(body);
  const model = liveChat();
  return model.visitor_post(await model.visitor_open_session(b.token), b.content);
}

export async function postVisitorAttachment(body: unknown): ReturnType<LiveChatModel['visitor_attach']> {
  const b = objectBody(body);
  const model = liveChat();
  return model.visitor_attach(await model.visitor_open_session(b.token), b.name, b.base64, b.mimetype);
}
