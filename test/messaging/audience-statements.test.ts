/**
 * The audience is resolved and linked set-based (issue 27 item 3): a message to 1,000 followers
 * costs the same statements as to 1 — and every one of them is linked and counted unread.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ProjectTask } from '../../modules/project/models/project_task.js';
import { Message } from '../../modules/messaging/models/message.js';
import { FkMessageNotifiedContact } from '../../modules/messaging/models/fk_message_notified_contact.js';
import { addFollowers } from '../../modules/messaging/thread/follow.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let contacts: number[] = [];
let author: number;

beforeAll(async () => {
  t = await testDatabase('full');
  await t.run(async () => {
    const groups = await Group.query({ identifier__in: ['core.group_user', 'project.group_project_user'] }).ids();
    const users = await User.create_many(Array.from({ length: 1001 }, (_, i) => ({ name: `Follower ${i}`, email: `follower${i}@aud.test`, groups })));
    const byUser = new Map((await Contact.query({ user__in: users.map((u) => u.id) }).read(['user'])).map((c) => [(c.user as { id: number }).id, c.id as number]));
    contacts = users.map((u) => byUser.get(u.id)!);
    author = contacts.pop()!;
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function taskFollowedBy(n: number): Promise<number> {
  return t.run(async () => {
    const task = await ProjectTask.create({ name: `Followed by ${n}` });
    await addFollowers('ProjectTask', contacts.slice(0, n).map((contact) => ({ document: task.id, contact })));
    return task.id;
  });
}

describe('message to N followers', () => {
  it('costs the same number of statements for 1, 100 and 1,000 followers, and links every one', async () => {
    const first: number[] = [];
    const kept: number[] = [];
    for (const n of [1, 100, 1000]) {
      const id = await taskFollowedBy(n);
      for (const into of [first, kept]) {
        let messageId = 0;
        const { count, statements } = await t.countStatements(() => t.run(async () => {
          messageId = (await Message.create_message({ model: 'ProjectTask', document: id, content: `<p>To ${n}</p>`, author })).id;
        }));
        into.push(count);
        const linked = await t.run(() => FkMessageNotifiedContact.query({ message: messageId, read: false }).with_archived().count());
        expect(linked, statements.join('\n')).toBe(n);
      }
    }
    // Once the recipients' memberships and profile are kept (recipient-profiles.ts), a post costs
    // the same whoever the audience; a first post to new people reads their memberships in one
    // statement more, and a new profile's grants in one more.
    expect(kept).toEqual([kept[0], kept[0], kept[0]]);
    for (const k of [0, 1, 2]) expect(first[k]! - kept[k]!).toBeGreaterThanOrEqual(1);
    for (const k of [0, 1, 2]) expect(first[k]! - kept[k]!).toBeLessThanOrEqual(2);
  }, 60_000);
});
