/**
 * Which of some users may read one record now (CONTRACTS C5 "Access": followers of records they
 * can no longer read are not told of their messages). Users with the same groups and companies
 * share an access profile, so the record is checked once per distinct profile, not per user: a
 * message to 1,000 followers of one team costs the statements of one. Memberships and profiles
 * come from `recipient-profiles.ts` (kept per security version). Only a profile whose rules on the
 * model name `user_id` is checked user by user, as its answer differs per user.
 */
import { QuerySet, currentEnv, withEnv } from 'fieldforge';
import { compileAccessPolicy } from '../../../src/access/access-policy.js';
import type { AccessProfile } from '../../../src/access/access-profile.js';
import { membershipsOf, profileOf, signatureOf, type Memberships } from './recipient-profiles.js';

/** `now`: the security version the caller's statement saw (`recipient-profiles.ts`). */
export async function readableBy(model: string, document: number, uids: readonly number[], now: number): Promise<Set<number>> {
  const readable = new Set<number>();
  if (!uids.length) return readable;
  const bySignature = new Map<string, { memberships: Memberships; uids: number[] }>();
  for (const [uid, memberships] of await membershipsOf(uids, now)) {
    const key = signatureOf(memberships);
    const group = bySignature.get(key) ?? bySignature.set(key, { memberships, uids: [] }).get(key)!;
    group.uids.push(uid);
  }
  for (const { memberships, uids: members } of bySignature.values()) {
    const profile = await profileOf(memberships, now);
    if (!profile.rights.get(model)?.has('read')) continue;
    const perUser = (profile.rules.get(model) ?? []).some((rule) => rule.perms.has('read') && JSON.stringify(rule.filter).includes('"user_id"'));
    for (const batch of perUser ? members.map((uid) => [uid]) : [members]) {
      if (await mayRead(profile, batch[0]!, memberships.companies, model, document)) for (const uid of batch) readable.add(uid);
    }
  }
  return readable;
}

/** Whether `uid`, with `profile`, may read the record: the ORM's own read, as that principal. */
async function mayRead(profile: AccessProfile, uid: number, companies: readonly number[], model: string, document: number): Promise<boolean> {
  const { registry } = currentEnv();
  return withEnv({
    su: false, uid, companyIds: companies, companyId: companies[0] ?? null, access: compileAccessPolicy(profile),
  }, async () => (await new QuerySet(registry.meta(model)).with_archived().filter({ id: document }).count()) > 0);
}
