/**
 * Every `User` has a `Contact` (CONTRACTS C5): authors, followers and recipients are contacts, and
 * a user is reached through the contact whose `user` is that user. A user's contact is created with
 * the user and, for users that existed before the messaging module, at its install. A user's
 * contact belongs to no company: a person is reachable from every company they work in.
 */
import { QuerySet, currentEnv, withEnv } from 'fieldforge';

/** Creates the contacts of users `ids` (all users when absent) that have none: three statements. */
export async function ensureUserContacts(ids?: readonly number[]): Promise<void> {
  await withEnv({ su: true }, async () => {
    const { registry } = currentEnv();
    const users = new QuerySet(registry.meta('User')).with_archived();
    const rows = await (ids ? users.filter({ id__in: [...ids] }) : users).read(['name', 'email']);
    if (!rows.length) return;
    const contacts = new QuerySet(registry.meta('Contact')).with_archived().filter({ user__in: rows.map((r) => r.id as number) });
    const having = new Set((await contacts.read(['user'])).map((c) => (c.user as { id: number }).id));
    const missing = rows.filter((r) => !having.has(r.id as number));
    if (!missing.length) return;
    const Contact = registry.meta('Contact').cls;
    await Contact.create_many(missing.map((u) => ({ name: u.name, email: u.email ?? null, user: u.id })));
  });
}

/** The contact of user `uid` (its first), or null when it has none. */
export async function contactOfUser(uid: number | null): Promise<number | null> {
  if (!uid) return null;
  return withEnv({ su: true }, async () => {
    const { registry } = currentEnv();
    const [id] = await new QuerySet(registry.meta('Contact')).with_archived().filter({ user: uid }).order_by('id ASC').limit(1).ids();
    return id ?? null;
  });
}

/** The calling principal's contact, created when a user made before the module has none yet. */
export async function callerContact(): Promise<number | null> {
  const { uid } = currentEnv();
  if (!uid) return null;
  const found = await contactOfUser(uid);
  if (found !== null) return found;
  await ensureUserContacts([uid]);
  return contactOfUser(uid);
}
