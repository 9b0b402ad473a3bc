/**
 * Who comes to follow a `_mail_thread` record (spec §6.5 rule 4, C5 precision 1): its creator, and
 * whoever a `_follow_fields` field assigns it to — on every write path, as the ORM calls
 * `_after_change` on each. The assigned people are read back from the rows just written (one
 * statement), mapped to contacts (one more for fields to `User`), and followed in one statement.
 */
import { QuerySet, currentEnv, withEnv, type ModelChangeDone } from 'fieldforge';
import type { ModelMeta } from '../../../src/orm/model-meta.js';
import { ManyToOneField } from '../../../src/orm/fields/relational-fields.js';
import { addFollowers, type FollowPair } from './follow.js';
import { callerContact } from './user-contacts.js';

export async function followOnChange(meta: ModelMeta, change: ModelChangeDone): Promise<void> {
  const fieldNames = followFields(meta);
  const written = change.op === 'create' ? fieldNames : fieldNames.filter((f) => f in change.vals);
  const creator = change.op === 'create' ? await callerContact() : null;
  if (!written.length && creator === null) return;
  await withEnv({ su: true }, async () => {
    const pairs: FollowPair[] = creator === null ? [] : change.ids.map((document) => ({ document, contact: creator }));
    if (written.length) pairs.push(...(await assignedPairs(meta, change.ids, written)));
    await addFollowers(meta.name, pairs);
  });
}

/** The `_follow_fields` of the model, checked: each a ManyToOne to Contact or User. */
export function followFields(meta: ModelMeta): string[] {
  const names = (meta.cls as { _follow_fields?: string[] })._follow_fields ?? [];
  for (const name of names) {
    const field = meta.fields.get(name);
    if (!(field instanceof ManyToOneField) || !['Contact', 'User'].includes(field.targetName)) {
      throw new Error(`${meta.name}._follow_fields: '${name}' must be a ManyToOne to Contact or User`);
    }
  }
  return names;
}

async function assignedPairs(meta: ModelMeta, ids: readonly number[], names: readonly string[]): Promise<FollowPair[]> {
  const rows = await new QuerySet(meta).with_archived().filter({ id__in: [...ids] }).read(names.map((n) => `${n}.id`));
  const contacts: FollowPair[] = [];
  const users: { document: number; user: number }[] = [];
  for (const row of rows) {
    for (const name of names) {
      const value = (row[name] as { id: number } | null)?.id;
      if (!value) continue;
      if ((meta.fields.get(name) as ManyToOneField).targetName === 'Contact') contacts.push({ document: row.id as number, contact: value });
      else users.push({ document: row.id as number, user: value });
    }
  }
  if (users.length) {
    const { registry } = currentEnv();
    const found = await new QuerySet(registry.meta('Contact')).with_archived()
      .filter({ user__in: [...new Set(users.map((u) => u.user))] }).order_by('id DESC').read(['user']);
    // A user's contact is its first (lowest id): later rows are overwritten by earlier ones.
    const byUser = new Map(found.map((c) => [(c.user as { id: number }).id, c.id as number]));
    for (const u of users) {
      const contact = byUser.get(u.user);
      if (contact) contacts.push({ document: u.document, contact });
    }
  }
  return contacts;
}
