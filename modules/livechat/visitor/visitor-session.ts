/**
 * The visitor's side of a session (spec §4.10, §5, CONTRACTS C5 "Live chat"): starting one, finding
 * it by its token, posting text and files, reading its history, and the bookkeeping of the socket
 * (seen, online). The visitor is nobody in the database, so every step runs as the platform — the
 * routes call these only with a session whose token they checked. Text is the visitor's words, not
 * HTML: it is escaped into paragraphs before the message's own sanitising.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AuthenticationError, PayloadTooLarge, QuerySet, TooManyRequests, ValidationError, currentEnv, sql, withEnv, type Model, type VisitorHistory } from 'fieldforge';

export type { VisitorHistory };
import { AGENT_GROUP, assignAgent } from './assign-agent.js';
import { visitorLimits } from './limits.js';
import { visitorMessages } from './visitor-messages.js';

const SESSION = 'LiveChatSession';
/** A token is 32 random bytes, base64url (43 characters). */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface StartedSession {
  session_id: number;
  token: string;
  /** False when no agent is online: the answer will come later (the widget says so). */
  agents_online: boolean;
}

export interface OpenSession {
  id: number;
  state: 'open' | 'closed';
  visitor_name: string;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const sessions = () => new QuerySet(currentEnv().registry.meta(SESSION));
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": '#39' }[c]};`);

/** The visitor's text as message HTML: a blank line starts a paragraph, a line break stays one. */
export function textAsHtml(text: string): string {
  return text.trim().split(/\n\s*\n/).map((para) => `<p>${escape(para.trim()).replace(/\r?\n/g, '<br>')}</p>`).join('');
}

function optionalText(value: unknown, field: string, max: number): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string`, { field });
  const text = value.trim();
  if (text.length > max) throw new ValidationError(`${field} is longer than ${max} characters`, { field });
  return text || null;
}

export async function startSession(name: unknown, email: unknown): Promise<StartedSession> {
  const visitorName = optionalText(name, 'name', 120) ?? 'Visitor';
  const visitorEmail = optionalText(email, 'email', 255);
  if (visitorEmail !== null && !EMAIL.test(visitorEmail)) throw new ValidationError('email is not an e-mail address', { field: 'email' });
  const token = randomBytes(32).toString('base64url');
  return withEnv({ su: true }, async () => {
    const session = await currentEnv().registry.meta(SESSION).cls.create({
      visitor_name: visitorName, visitor_email: visitorEmail, token_hash: hashToken(token), state: 'open',
    });
    const { agent, agentsOnline } = await assignAgent(session.id);
    if (agent !== null) await sessions().filter({ id: session.id }).update({ agent });
    return { session_id: session.id, token, agents_online: agentsOnline };
  });
}

/** The session `token` opens, or null (malformed, unknown: another database's token is unknown here). */
export async function sessionByToken(token: unknown): Promise<OpenSession | null> {
  if (typeof token !== 'string' || !TOKEN.test(token)) return null;
  const [row] = await withEnv({ su: true }, () => sessions().filter({ token_hash: hashToken(token) }).read(['state', 'visitor_name']));
  return row ? { id: row.id as number, state: row.state as OpenSession['state'], visitor_name: row.visitor_name as string } : null;
}

/** The open session `token` opens; 401 otherwise (unknown, malformed or closed). */
export async function openSessionOf(token: unknown): Promise<OpenSession> {
  const session = await sessionByToken(token);
  if (!session) throw new AuthenticationError('Invalid live-chat token');
  if (session.state !== 'open') throw new AuthenticationError('This chat is closed');
  return session;
}

/**
 * Refuses a post over the session's rate, counted in the database so the bound holds over every
 * worker: the visitor's messages (files included) of the last minute, and its files of the last hour.
 */
async function assertRate(session: OpenSession, file: boolean): Promise<void> {
  const limits = visitorLimits();
  const { registry } = currentEnv();
  const since = (ms: number) => new Date(Date.now() - ms).toISOString();
  const lastMinute = await new QuerySet(registry.meta('Message'))
    .filter({ model: SESSION, document: session.id, livechat_visitor: true, created_date__gt: since(60_000) }).count();
  if (lastMinute >= limits.messagesPerMinute) {
    throw new TooManyRequests(`Too many messages: at most ${limits.messagesPerMinute} a minute; wait a moment and send again`, 10);
  }
  if (!file) return;
  const lastHour = await new QuerySet(registry.meta('Attachment')).filter({ model: SESSION, record: session.id, created_date__gt: since(3_600_000) }).count();
  if (lastHour >= limits.filesPerHour) throw new TooManyRequests(`Too many files: at most ${limits.filesPerHour} an hour`, 60);
}

async function postAsVisitor(session: OpenSession, content: string, attachments: number[] = []): Promise<number> {
  const Message = currentEnv().registry.meta('Message').cls;
  const message = await Message.create({
    model: SESSION, document: session.id, content, message_type: 'comment', author: null, author_name: session.visitor_name,
    record_name: session.visitor_name, livechat_visitor: true, ...(attachments.length ? { attachments } : {}),
  });
  await (message as Model & { notify_record_followers(): Promise<void> }).notify_record_followers();
  return message.id;
}

export async function postMessage(session: OpenSession, content: unknown): Promise<{ id: number }> {
  if (typeof content !== 'string' || !content.trim()) throw new ValidationError('content must be a non-empty string', { field: 'content' });
  const { maxMessageChars } = visitorLimits();
  if (content.length > maxMessageChars) throw new PayloadTooLarge(`The message is longer than ${maxMessageChars} characters; send it in parts`);
  return withEnv({ su: true }, async () => {
    await assertRate(session, false);
    return { id: await postAsVisitor(session, textAsHtml(content)) };
  });
}

export interface PostedFile {
  id: number;
  message_id: number;
  name: string;
  mimetype: string | null;
}

export async function postAttachment(session: OpenSession, name: unknown, base64: unknown, mimetype: unknown): Promise<PostedFile> {
  const fileName = optionalText(name, 'name', 255);
  if (fileName === null) throw new ValidationError('name must be the file name', { field: 'name' });
  if (typeof base64 !== 'string' || !base64) throw new ValidationError('base64 must be the file content, base64-encoded', { field: 'base64' });
  if (mimetype !== undefined && mimetype !== null && (typeof mimetype !== 'string' || mimetype.length > 255)) {
    throw new ValidationError('mimetype must be a media type such as image/png', { field: 'mimetype' });
  }
  const { maxFileBytes } = visitorLimits();
  const bytes = Math.floor((base64.replace(/=+$/, '').length * 3) / 4);
  if (bytes > maxFileBytes) throw new PayloadTooLarge(`The file is larger than ${maxFileBytes} bytes`);
  return withEnv({ su: true }, async () => {
    await assertRate(session, true);
    const Attachment = currentEnv().registry.meta('Attachment').cls;
    const file = await Attachment.create({ name: fileName, base64, ...(mimetype ? { mimetype } : {}), model: SESSION, record: session.id });
    const [stored] = await new QuerySet(currentEnv().registry.meta('Attachment')).filter({ id: file.id }).read(['mimetype']);
    const content = `<p>${escape(fileName)}</p>`;
    const messageId = await postAsVisitor(session, content, [file.id]);
    return { id: file.id, message_id: messageId, name: fileName, mimetype: (stored?.mimetype as string | null) ?? null };
  });
}

/** What the visitor's socket sends on connect: the public messages after `afterId`, the state, whether an agent is online. */
export async function history(sessionId: number, afterId: number | null): Promise<VisitorHistory> {
  return withEnv({ su: true }, async () => {
    const [session] = await sessions().filter({ id: sessionId }).read(['state', 'agent']);
    const messages = (await visitorMessages({ session: sessionId, afterId })).map((m) => m.message);
    const agent = (session?.agent as { id: number } | null)?.id ?? null;
    return { messages, state: (session?.state as VisitorHistory['state']) ?? 'closed', agents_online: await agentOnline(agent) };
  });
}

async function agentOnline(agent: number | null): Promise<boolean> {
  const { ports, db } = currentEnv();
  try {
    const online = await ports.bus?.presence.online(db.name) ?? [];
    if (agent !== null) return online.includes(agent);
    const agents = await new QuerySet(currentEnv().registry.meta('User')).filter({ groups__identifier: AGENT_GROUP }).ids();
    return agents.some((uid) => online.includes(uid));
  } catch {
    return false;
  }
}

/**
 * Bookkeeping of the socket, written straight (one statement each): `last_seen` and
 * `visitor_online` are the platform's, and a heartbeat every 25 s must not make every agent's open
 * form offer a reload, as an ORM write would (record-changed pings).
 */
export async function markSeen(ids: readonly number[]): Promise<void> {
  if (!ids.length) return;
  const { registry, work } = currentEnv();
  const session = registry.meta(SESSION);
  await sql`UPDATE ${sql.table(session.table)} SET ${sql.id(session.fields.get('last_seen')!.column!)} = now()
    WHERE id = ANY(${[...ids]}::int[])`.execute(work.trx);
}

/** Stores each session's presence: one statement whatever the number of sessions. */
export async function markOnline(changes: readonly { id: number; online: boolean }[]): Promise<void> {
  if (!changes.length) return;
  const { registry, work } = currentEnv();
  const session = registry.meta(SESSION);
  const col = (name: string) => sql.id(session.fields.get(name)!.column!);
  const online = changes.filter((c) => c.online).map((c) => c.id);
  await sql`UPDATE ${sql.table(session.table)} SET ${col('visitor_online')} = (id = ANY(${online}::int[])), ${col('last_seen')} = now()
    WHERE id = ANY(${changes.map((c) => c.id)}::int[])`.execute(work.trx);
}
