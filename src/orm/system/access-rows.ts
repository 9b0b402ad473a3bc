/**
 * The rows an access profile is made of (`access/access-profile.ts` interprets them): a principal's
 * groups and companies (or many users' at once), then the model rights and record rules that apply
 * to those groups — two statements, on the tables the registry names. Here, in the ORM, because they read model tables.
 */
import type { SqlExecutor } from '../../db/sql-executor.js';
import { sql } from '../../db/sql-fragment.js';
import type { ManyToManyField } from '../fields/relational-fields.js';
import type { Registry } from '../registry.js';

/** Whose groups: a person's own, or — for an API key — its service account's. */
export interface ProfileSubject {
  uid: number;
  serviceAccountId: number | null;
}

export interface Memberships {
  groups: number[];
  companies: number[];
}

/** A model right (`kind: 'right'`, every grant of the groups ORed) or an active record rule that applies. */
export interface GrantRow {
  kind: 'right' | 'rule';
  id: number | null;
  name: string | null;
  model: string;
  filter: string | null;
  is_global: boolean | null;
  read: boolean;
  write: boolean;
  create: boolean;
  delete: boolean;
}

function joinTable(registry: Registry, model: string, field: string) {
  return (registry.meta(model).fields.get(field) as ManyToManyField).join;
}

/** The subject's groups and its companies (its allowed ones and its current one), in one statement. */
export async function memberships(db: SqlExecutor, registry: Registry, subject: ProfileSubject): Promise<Memberships> {
  const userGroups = joinTable(registry, 'User', 'groups');
  const accountGroups = joinTable(registry, 'ServiceAccount', 'groups');
  const userCompanies = joinTable(registry, 'User', 'companies');
  const groupsSql = subject.serviceAccountId !== null
    ? sql`SELECT ${sql.id(accountGroups.targetColumn)} FROM ${sql.table(accountGroups.table)} WHERE ${sql.id(accountGroups.sourceColumn)} = ${subject.serviceAccountId}`
    : sql`SELECT ${sql.id(userGroups.targetColumn)} FROM ${sql.table(userGroups.table)} WHERE ${sql.id(userGroups.sourceColumn)} = ${subject.uid}`;
  const { rows: [who] } = await sql<Memberships>`SELECT
      ARRAY(${groupsSql}) AS groups,
      ARRAY(SELECT ${sql.id(userCompanies.targetColumn)} FROM ${sql.table(userCompanies.table)} WHERE ${sql.id(userCompanies.sourceColumn)} = ${subject.uid}
            UNION SELECT company_id FROM ${sql.table(registry.meta('User').table)} WHERE id = ${subject.uid} AND company_id IS NOT NULL) AS companies`.execute(db);
  return { groups: who?.groups ?? [], companies: who?.companies ?? [] };
}

/**
 * Each active user's memberships as `memberships` reads one subject's, for any number of users in
 * one statement (groups and companies sorted, so users with the same ones share a profile).
 */
export async function membershipsOfUsers(db: SqlExecutor, registry: Registry, uids: readonly number[]): Promise<Map<number, Memberships>> {
  const user = registry.meta('User');
  const groups = joinTable(registry, 'User', 'groups');
  const companies = joinTable(registry, 'User', 'companies');
  const company = sql.id(user.fields.get('company')!.column!);
  const { rows } = await sql<{ uid: number } & Memberships>`WITH people AS (
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
      FROM people p LEFT JOIN their_groups g ON g.uid = p.uid LEFT JOIN their_companies co ON co.uid = p.uid`.execute(db);
  return new Map(rows.map((r) => [r.uid, { groups: r.groups, companies: r.companies }]));
}

/** The rights and the active record rules of `groupIds` (and of no group), in one statement. */
export async function grantRows(db: SqlExecutor, registry: Registry, groupIds: readonly number[]): Promise<GrantRow[]> {
  const ruleGroups = joinTable(registry, 'RecordRule', 'groups');
  const { rows } = await sql<GrantRow>`SELECT 'right' AS kind, NULL::int AS id, NULL AS name, model, NULL AS filter, NULL::boolean AS is_global,
        bool_or(read_perm) AS read, bool_or(write_perm) AS write, bool_or(create_perm) AS create, bool_or(delete_perm) AS delete
      FROM ${sql.table(registry.meta('ModelAccess').table)}
      WHERE group_id IS NULL OR group_id = ANY(${[...groupIds]}::int[])
      GROUP BY model
    UNION ALL
    SELECT 'rule', r.id, r.name, r.model, r.filter,
        NOT EXISTS (SELECT 1 FROM ${sql.table(ruleGroups.table)} g WHERE g.${sql.id(ruleGroups.sourceColumn)} = r.id),
        r.perm_read, r.perm_write, r.perm_create, r.perm_delete
      FROM ${sql.table(registry.meta('RecordRule').table)} r
      WHERE r.active IS TRUE AND (
        NOT EXISTS (SELECT 1 FROM ${sql.table(ruleGroups.table)} g WHERE g.${sql.id(ruleGroups.sourceColumn)} = r.id)
        OR EXISTS (SELECT 1 FROM ${sql.table(ruleGroups.table)} g WHERE g.${sql.id(ruleGroups.sourceColumn)} = r.id
                   AND g.${sql.id(ruleGroups.targetColumn)} = ANY(${[...groupIds]}::int[])))`.execute(db);
  return rows;
}
