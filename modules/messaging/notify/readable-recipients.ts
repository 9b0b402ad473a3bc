/**
 * Which of some users may read one record now (CONTRACTS C5 "Access": followers of records they
 * can no longer read are not told of their messages). Users with the same groups and companies
 * share an access profile, so the record is checked once per distinct profile, not per user: a
 * message to 1,000 followers of one team costs the statements of one. Only a profile whose rules
 * on the model name `user_id` is checked user by user, as its answer differs per user.
 */
import { QuerySet, currentEnv, sql, withEnv } from 'fieldforge';
import { profileOfMemberships, type AccessProfile } from '../../../src/access/access-profile.js';
import { compileAccessPolicy } from '../../../src/access/access-policy.js';
import type { ManyToManyField } from '../../../src/orm/fields/relational-fields.js';

interface Member {
  uid: number;
  groups: number[];
  companies: number[];
}

export async function readableBy(model: string, document: number, uids: readonly number[]): Promise<Set<number>> {
  const readable = new Set<number>();
  if (!uids.length) return readable;
  const bySignature = new Map<string, Member[]>();
  for (const m of await memberships(uids)) {
    const key = `${m.groups.join(',')}|${m.companies.join(',')}`;
    (bySignature.get(key) ?? bySignature.set(key, []).get(key)!).push(m);
  }
  const { registry, work } = currentEnv();
  for (const members of bySignature.values()) {
    const profile = await profileOfMemberships(work.trx, registry, members[0]!);
    if (!profile.rights.get(model)?.has('read')) continue;
    const perUser = (profile.rules.get(model) ?? []).some((rule) => rule.perms.has('read') && JSON.stringify(rule.filter).includes('"user_id"'));
    for (const batch of perUser ? members.map((m) => [m]) : [members]) {
      if (await mayRead(profile, batch[0]!, model, document)) for (const m of batch) readable.add(m.uid);
    }
  }
  return readable;
}

/** Each user's groups and companies (allowed ones and the current one), sorted, in one statement. */
async function memberships(uids: readonly number[]): Promise<Member[]> {
  const { registry, work } = currentEnv();
  const user = registry.meta('User');
  const groups = (user.fields.get('groups') as ManyToManyField).join;
  const companies = (user.fields.get('companies') as ManyToManyField).join;
  const { rows } = await sql<Member>`SELECT u.id AS uid,
      ARRAY(SELECT g.${sql.id(groups.targetColumn)} FROM ${sql.table(groups.table)} g WHERE g.${sql.id(groups.sourceColumn)} = u.id ORDER BY 1) AS groups,
      ARRAY(SELECT c.${sql.id(companies.targetColumn)} FROM ${sql.table(companies.table)} c WHERE c.${sql.id(companies.sourceColumn)} = u.id
            UNION SELECT u.company_id WHERE u.company_id IS NOT NULL ORDER BY 1) AS companies
    FROM ${sql.table(user.table)} u WHERE u.id = ANY(${[...uids]}::int[]) AND u.active`.execute(work.trx);
  return rows;
}

/** Whether `member`, with `profile`, may read the record: the ORM's own read, as that principal. */
async function mayRead(profile: AccessProfile, member: Member, model: string, document: number): Promise<boolean> {
  const { registry } = currentEnv();
  return withEnv({
    su: false, uid: member.uid, companyIds: member.companies, companyId: member.companies[0] ?? null, access: compileAccessPolicy(profile),
  }, async () => (await new QuerySet(registry.meta(model)).with_archived().filter({ id: document }).count()) > 0);
}
