/**
 * The people of the messaging bench (`messaging-bench.ts`): users of the core and project groups,
 * each with the contact the messaging module gives every user, created in one unit of work; tasks
 * followed by all their contacts (`addFollowers`, one statement); sessions signed with the secret
 * the bench's server processes are given (`FF_SECRET`), so their tokens open sockets there.
 */
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { Followers } from '../../modules/messaging/models/followers.js';
import { addFollowers } from '../../modules/messaging/thread/follow.js';
import { openSession } from '../../src/auth/sessions.js';

/** Runs `fn` in a unit of work of the bench database (as the platform when no uid is given). */
export type RunIn = <T>(fn: () => Promise<T>, options?: { uid?: number }) => Promise<T>;

export interface People {
  uids: number[];
  /** The contact of each user, by index. */
  contacts: number[];
}

/** `n` users of the core and project user groups, with their contacts. */
export async function createPeople(run: RunIn, n: number, tag: string): Promise<People> {
  return run(async () => {
    const groups = await Group.query({ identifier__in: ['core.group_user', 'project.group_project_user'] }).ids();
    const users = await User.create_many(Array.from({ length: n }, (_, i) => ({ name: `${tag} ${i}`, email: `${tag.toLowerCase()}${i}@bench.test`, groups })));
    const uids = users.map((u) => u.id);
    const rows = await Contact.query({ user__in: uids }).with_archived().read(['user']);
    const byUser = new Map(rows.map((c) => [(c.user as { id: number }).id, c.id as number]));
    return { uids, contacts: uids.map((uid) => byUser.get(uid)!) };
  });
}

/** A new task followed by every contact of `contacts`; answers its id and its number of followers. */
export async function followedTask(run: RunIn, name: string, contacts: readonly number[]): Promise<{ id: number; followers: number }> {
  return run(async () => {
    const task = await ProjectTask.create({ name });
    await addFollowers('ProjectTask', contacts.map((contact) => ({ document: task.id, contact })));
    return { id: task.id, followers: await Followers.query({ model: 'ProjectTask', document: task.id }).count() };
  });
}

/** A session of each user (an access token), signed with `secret`, opened in one unit of work. */
export async function openSessions(run: RunIn, dbName: string, uids: readonly number[], secret: string): Promise<string[]> {
  return run(async () => {
    const tokens: string[] = [];
    for (const uid of uids) tokens.push((await openSession(uid, { dbName, secret, sessionHours: 8 })).access_token);
    return tokens;
  });
}
