/**
 * Who comes to follow a `_mail_thread` record (spec §6.5 rule 4, C5 precision 1): its creator, and
 * whoever a `_follow_fields` field assigns it to — on every write path, as the ORM calls
 * `_after_change` on each. One statement whatever the number of records: the people come from the
 * values as written (a ManyToOne the write accepted holds a valid id), a `User` mapped to its
 * contact inside the statement; only values given in another form (rare) are read back first.
 */
import { QuerySet, currentEnv, sql, withEnv, type ModelChangeDone } from 'fieldforge';
import type { ModelMeta } from '../../../src/orm/model-meta.js';
import { ManyToOneField } from '../../../src/orm/fields/relational-fields.js';

interface Assigned {
  documents: number[];
  contacts: number[];
  users: number[];
}

export async function followOnChange(meta: ModelMeta, change: ModelChangeDone): Promise<void> {
  const fieldNames = followFields(meta);
  const { uid } = currentEnv();
  const creator = change.op === 'create' ? uid : null;
  const given = change.op === 'create'
    ? fieldNames.filter((f) => change.vals.some((v) => v[f] !== undefined && v[f] !== null))
    : fieldNames.filter((f) => f in change.vals && change.vals[f] !== null);
  if (!given.length && creator === null) return;
  await withEnv({ su: true }, async () => {
    const assigned = await assignedPeople(meta, change, given);
    await follow(meta.name, change.ids, creator, assigned);
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

/** Each record's assigned person per field, from the values written (read back when not plain ids). */
async function assignedPeople(meta: ModelMeta, change: ModelChangeDone, names: readonly string[]): Promise<Assigned> {
  const out: Assigned = { documents: [], contacts: [], users: [] };
  if (!names.length) return out;
  const valueOf = (i: number, name: string): unknown => (change.op === 'create' ? change.vals[i]![name] : change.vals[name]);
  const plain = change.ids.every((_, i) => names.every((n) => { const v = valueOf(i, n); return v === undefined || v === null || Number.isSafeInteger(v); }));
  const rows = plain
    ? change.ids.map((id, i) => ({ id, ...Object.fromEntries(names.map((n) => [n, valueOf(i, n) ?? null])) }))
    : (await new QuerySet(meta).with_archived().filter({ id__in: [...change.ids] }).read(names.map((n) => `${n}.id`)))
      .map((r) => ({ id: r.id as number, ...Object.fromEntries(names.map((n) => [n, (r[n] as { id: number } | null)?.id ?? null])) }));
  for (const row of rows as Record<string, unknown>[]) {
    for (const name of names) {
      const value = row[name];
      if (typeof value !== 'number') continue;
      const toContact = (meta.fields.get(name) as ManyToOneField).targetName === 'Contact';
      out.documents.push(row.id as number);
      out.contacts.push(toContact ? value : 0);
      out.users.push(toContact ? 0 : value);
    }
  }
  return out;
}

/** One INSERT: the creator's contact on every record, and each assigned contact (or user's contact). */
async function follow(model: string, ids: readonly number[], creator: number | null, a: Assigned): Promise<void> {
  const { registry, work, uid } = currentEnv();
  const followers = registry.meta('Followers');
  const contact = registry.meta('Contact');
  const f = (name: string) => sql.id(followers.fields.get(name)!.column!);
  const userColumn = sql.id(contact.fields.get('user')!.column!);
  const contactOf = (user: ReturnType<typeof sql.ref>) => sql`(SELECT c.id FROM ${sql.table(contact.table)} c WHERE c.${userColumn} = ${user} ORDER BY c.id LIMIT 1)`;
  const now = new Date().toISOString();
  await sql`INSERT INTO ${sql.table(followers.table)}
      (${f('model')}, ${f('document')}, ${f('contact')}, ${f('created_date')}, ${f('created_by')}, ${f('updated_date')}, ${f('updated_by')})
    SELECT DISTINCT ${model}::varchar, p.document, p.contact, ${now}::timestamptz, ${uid}::int, ${now}::timestamptz, ${uid}::int FROM (
      SELECT d AS document, ${creator === null ? sql`NULL::int` : contactOf(sql.ref('creator.uid'))} AS contact
        FROM unnest(${creator === null ? [] : [...ids]}::int[]) AS d, (SELECT ${creator}::int AS uid) AS creator
      UNION ALL
      SELECT a.document, CASE WHEN a.contact > 0 THEN a.contact ELSE ${contactOf(sql.ref('a.user'))} END
        FROM unnest(${a.documents}::int[], ${a.contacts}::int[], ${a.users}::int[]) AS a(document, contact, "user")
    ) p WHERE p.contact IS NOT NULL
    ON CONFLICT (${f('model')}, ${f('document')}, ${f('contact')}) DO NOTHING`.execute(work.trx);
}
