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
import { currentEnv, sql } from 'fieldforge';
import { profileOfMemberships, type AccessProfile } from '../../../src/access/access-profile.js';
import type { ManyToManyField } from '../../../src/orm/fields/relational-fields.js';

export interface Memberships {
  groups: number[];
  companies: number[];
}

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
    for (const row of await readMemberships(missing)) {
      const m = { groups: row.groups, companies: row.companies };
      out.set(row.uid, m);
      entry?.members.set(row.uid, m);
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

/** One statement for any number of users: their groups and companies, aggregated per user. */
async function readMemberships(uids: readonly number[]): Promise<{ uid: number; groups: number[]; companies: number[] }[]> {
  const { registry, work } = currentEnv();
  const user = registry.meta('User');
  const groups = (user.fields.get('groups') as ManyToManyField).join;
  const companies = (user.fields.get('companies') as ManyToManyField).join;
  const company = sql.id(user.fields.get('company')!.column!);
  const { rows } = await sql<{ uid: number; groups: number[]; companies: number[] }>`WITH people AS (
      SELECT u.id AS uid, u.${company} AS company FROM ${sql.table(user.table)} u WHERE u.id = ANY(${[...uids]}::int[]) AND u.active
    ), their_groups AS (
      SELECT ${sql.id(groups.sourceColumn)} AS uid, array_agg(${sql.id(groups.targetColumn)} ORDER BY ${sql.id(groups.targetColumn)}) AS ids
        FROM ${sql.table(groups.table)} WHERE ${sql.id(groups.sourceColumn)} IN (SELECT uid FROM people) GROUP BY 1
    ), their_companies AS (
      SELECT uid, array_agg(company ORDER BY company) AS ids FROM (
        SELECT ${sql.id(companies.sourceColumn)} AS uid, ${sql.id(companies.targetColumn)} AS company
          FROM ${sql.table(companies.table)} WHERE ${sql.id(companies.sourceColumn)} IN (SELECT uid FROM people)
        UNION SELECT uid, company FROM people WHERE company IS NOT NULL) AS allowed GROUP BY 1
    )
    SELECT p.uid, COALESCE(g.ids, '{}') AS groups, COALESCE(co.ids, '{}') AS companies
      FROM people p LEFT JOIN their_groups g ON g.uid = p.uid LEFT JOIN their_companies co ON co.uid = p.uid`.execute(work.trx);
  return rows;
}
