/**
 * The users following live-chat sessions (their agents: the assigned one, or every agent when the
 * session came while none was online) and each session's visitor name, in one statement.
 */
import { currentEnv, sql } from 'fieldforge';

export interface SessionAgents {
  visitorName: string;
  users: number[];
}

export async function sessionAgents(ids: readonly number[]): Promise<Map<number, SessionAgents>> {
  const out = new Map<number, SessionAgents>();
  if (!ids.length) return out;
  const { registry, work } = currentEnv();
  const session = registry.meta('LiveChatSession');
  const followers = registry.meta('Followers');
  const contact = registry.meta('Contact');
  const f = (name: string) => sql.id('f', followers.fields.get(name)!.column!);
  const { rows } = await sql<{ id: number; visitor_name: string; users: (number | null)[] }>`SELECT s.id, s.${sql.id(session.fields.get('visitor_name')!.column!)} AS visitor_name,
      array_agg(c.${sql.id(contact.fields.get('user')!.column!)}) AS users
    FROM ${sql.table(session.table)} s
    LEFT JOIN ${sql.table(followers.table)} f ON ${f('model')} = 'LiveChatSession' AND ${f('document')} = s.id
    LEFT JOIN ${sql.table(contact.table)} c ON c.id = ${f('contact')}
    WHERE s.id = ANY(${[...ids]}::int[]) GROUP BY s.id`.execute(work.trx);
  for (const r of rows) out.set(r.id, { visitorName: r.visitor_name, users: [...new Set(r.users.filter((u): u is number => u !== null))] });
  return out;
}
