/**
 * The recipients' memberships (groups, companies) and the access profiles they make, kept per
 * database and security version: a message to the same 1,000 followers reads them once, not at
 * every post (3–4 ms a post). The security version moves with every change to who may do what —
 * memberships, a user's active flag or company, rights, rules (`src/access/security-version.ts`).
 * What is kept is used only while the version the linking statement sees (`now`, the transaction's
 * own changes included) is the one the unit of work started at (`Env.securityVersion`, committed):
 * then nothing changed since it was read, neither elsewhere nor in this transaction. Without a
 * starting version nothing is kept. Bounded: past `MAX_MEMBERS` people a version starts over.
 */
import { currentEnv } from 'fieldforge';
import { profileOfMemberships, type AccessProfile } from '../../../src/access/access-profile.js';
import { membershipsOfUsers, type Memberships } from '../../../src/orm/system/access-rows.js';

export type { Memberships };

const MAX_MEMBERS = 50_000;

interface Kept {
  version: number;
  members: Map<number, Memberships>;
  profiles: Map<string, AccessProfile>;
}

const byDatabase = new Map<string, Kept>();

function kept(now: number): Kept | null {
  const { db, securityVersion } = currentEnv();
  if (securityVersion === null || now !== securityVersion) return null;
  let entry = byDatabase.get(db.name);
  if (!entry || entry.version !== now || entry.members.size > MAX_MEMBERS) {
    entry = { version: now, members: new Map(), profiles: new Map() };
    byDatabase.set(db.name, entry);
  }
  return entry;
}

export const signatureOf = (m: Memberships): string => `${m.groups.join(',')}|${m.companies.join(',')}`;

/** Each active user's groups and companies (allowed ones and the current one), sorted; `now`: the security version seen. */
export async function membershipsOf(uids: readonly number[], now: number): Promise<Map<number, Memberships>> {
  const entry = kept(now);
  const out = new Map<number, Memberships>();
  const missing: number[] = [];
  for (const uid of uids) {
    const known = entry?.members.get(uid);
    if (known) out.set(uid, known);
    else missing.push(uid);
  }
  if (missing.length) {
    const { registry, work } = currentEnv();
    for (const [uid, m] of await membershipsOfUsers(work.trx, registry, missing)) {
      out.set(uid, m);
      entry?.members.set(uid, m);
    }
  }
  return out;
}

/** The profile of whoever has these memberships (its grants read once per version). */
export async function profileOf(memberships: Memberships, now: number): Promise<AccessProfile> {
  const entry = kept(now);
  const key = signatureOf(memberships);
  const known = entry?.profiles.get(key);
  if (known) return known;
  const { registry, work } = currentEnv();
  const profile = await profileOfMemberships(work.trx, registry, { groups: [...memberships.groups], companies: [...memberships.companies] });
  entry?.profiles.set(key, profile);
  return profile;
}
