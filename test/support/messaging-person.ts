/**
 * A person for the messaging tests: a user in the given groups (core and project users by
 * default), its contact (messaging gives every user one) and a session token.
 */
import { Group } from '../../modules/core/models/group.js';
import { User } from '../../modules/core/models/user.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { openSession } from '../../src/auth/sessions.js';
import type { TestDatabase } from './test-database.js';

export interface MessagingPerson {
  uid: number;
  contact: number;
  token: string;
  name: string;
}

export const PROJECT_PEOPLE = ['core.group_user', 'project.group_project_user'];

export async function messagingPerson(t: TestDatabase, name: string, groupIds: readonly string[] = PROJECT_PEOPLE): Promise<MessagingPerson> {
  return t.run(async () => {
    const groups = await Group.query({ identifier__in: [...groupIds] }).ids();
    const user = await User.create({ name, email: `${name.toLowerCase().replace(/\W/g, '')}@messaging.test`, groups });
    const contact = (await Contact.query({ user: user.id }).with_archived().first())!.id;
    const token = (await openSession(user.id, { dbName: t.name, secret: t.platform.secret, sessionHours: 8 })).access_token;
    return { uid: user.id, contact, token, name };
  });
}
