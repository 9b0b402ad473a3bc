/**
 * The rows an access profile is made of (`access/access-profile.ts` interprets them): a principal's
 * groups and companies, then the model rights and record rules that apply to those groups — two
 * statements, on the tables the registry names. Here, in the ORM, because they read model tables.
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
