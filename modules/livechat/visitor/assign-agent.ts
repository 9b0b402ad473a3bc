/**
 * Who answers a new session (issue 28 item 4): the online agent (`livechat.group_agent`, online on
 * the main socket, spec §6.2) with the fewest open sessions, ties broken at random, who follows it;
 * with no agent online, every agent follows it (whoever comes first answers) and the visitor is told
 * the answer will come later. Four statements, whatever the number of agents.
 */
import { randomInt } from 'node:crypto';
import { QuerySet, currentEnv } from 'fieldforge';
import { addFollowers } from '../../messaging/thread/follow.js';

export const AGENT_GROUP = 'livechat.group_agent';

export interface Assignment {
  /** The assigned agent's user; null when no agent was online. */
  agent: number | null;
  agentsOnline: boolean;
}

/** The agents (active users of the group) with their contacts and open sessions. */
async function agents(): Promise<{ uid: number; contact: number | null; open: number }[]> {
  const { registry } = currentEnv();
  const q = (model: string) => new QuerySet(registry.meta(model));
  const uids = await q('User').filter({ groups__identifier: AGENT_GROUP }).ids();
  if (!uids.length) return [];
  const contacts = await q('Contact').with_archived().filter({ user__in: uids }).order_by('id ASC').read(['user']);
  const open = await q('LiveChatSession').filter({ agent__in: uids, state: 'open' }).read(['agent']);
  const contactOf = new Map<number, number>();
  for (const c of contacts) {
    const uid = (c.user as { id: number } | null)?.id;
    if (uid !== undefined && !contactOf.has(uid)) contactOf.set(uid, c.id as number);
  }
  const count = new Map<number, number>();
  for (const s of open) {
    const uid = (s.agent as { id: number } | null)?.id;
    if (uid !== undefined) count.set(uid, (count.get(uid) ?? 0) + 1);
  }
  return uids.map((uid) => ({ uid, contact: contactOf.get(uid) ?? null, open: count.get(uid) ?? 0 }));
}

async function onlineUsers(): Promise<Set<number>> {
  const { ports, db } = currentEnv();
  try {
    return new Set(await ports.bus?.presence.online(db.name) ?? []);
  } catch {
    return new Set(); // presence unreadable (Redis away): nobody counts as online, every agent follows
  }
}

export async function assignAgent(sessionId: number): Promise<Assignment> {
  const all = await agents();
  const online = await onlineUsers();
  const present = all.filter((a) => online.has(a.uid));
  if (!present.length) {
    await addFollowers('LiveChatSession', all.flatMap((a) => (a.contact ? [{ document: sessionId, contact: a.contact }] : [])));
    return { agent: null, agentsOnline: false };
  }
  const fewest = Math.min(...present.map((a) => a.open));
  const tied = present.filter((a) => a.open === fewest);
  const chosen = tied[randomInt(tied.length)]!;
  if (chosen.contact) await addFollowers('LiveChatSession', [{ document: sessionId, contact: chosen.contact }]);
  return { agent: chosen.uid, agentsOnline: true };
}
