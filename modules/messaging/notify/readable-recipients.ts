/**
 * Which of some users may read one record now (CONTRACTS C5 "Access": followers of records they
 * can no longer read are not told of their messages). Users with the same groups and companies
 * share an access profile, so the record is checked once per distinct profile, not per user: a
 * message to 1,000 followers of one team costs the statements of one. The caller gives the users
 * already grouped by their memberships (`notify-followers.ts` reads them with the audience, in the
 * same statement). Only a profile whose rules on the model name `user_id` is checked user by user,
 * as its answer differs per user.
 */
import { QuerySet, currentEnv, withEnv } from 'fieldforge';
import { profileOfMemberships, type AccessProfile } from '../../../src/access/access-profile.js';
import { compileAccessPolicy } from '../../../src/access/access-policy.js';

/** Users who share their groups and companies (each list sorted). */
export interface MembershipGroup {
  uids: number[];
  groups: number[];
  companies: number[];
}

export async function readableBy(model: string, document: number, members: readonly MembershipGroup[]): Promise<Set<number>> {
  const readable = new Set<number>();
  const { registry, work } = currentEnv();
  for (const group of members) {
    if (!group.uids.length) continue;
    const profile = await profileOfMemberships(work.trx, registry, group);
    if (!profile.rights.get(model)?.has('read')) continue;
    const perUser = (profile.rules.get(model) ?? []).some((rule) => rule.perms.has('read') && JSON.stringify(rule.filter).includes('"user_id"'));
    for (const batch of perUser ? group.uids.map((uid) => [uid]) : [group.uids]) {
      if (await mayRead(profile, batch[0]!, group.companies, model, document)) for (const uid of batch) readable.add(uid);
    }
  }
  return readable;
}

/** Whether `uid`, with `profile`, may read the record: the ORM's own read, as that principal. */
async function mayRead(profile: AccessProfile, uid: number, companies: number[], model: string, document: number): Promise<boolean> {
  const { registry } = currentEnv();
  return withEnv({
    su: false, uid, companyIds: companies, companyId: companies[0] ?? null, access: compileAccessPolicy(profile),
  }, async () => (await new QuerySet(registry.meta(model)).with_archived().filter({ id: document }).count()) > 0);
}
