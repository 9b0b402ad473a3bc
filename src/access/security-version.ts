/**
 * The security version: a counter in `ff_state` that every change to who may do what moves —
 * access rows, record rules, group and company memberships, a user's active flag or companies.
 * Workers cache access profiles per version and the request guard compares it in the request's
 * first statement, so a change holds from the very next request on every worker. The counter is
 * moved by statement-level triggers, not by ORM code, so no write path (raw SQL, data files, a
 * future endpoint) can forget it.
 */
import { sql, type Kysely } from 'kysely';
import type { ManyToManyField } from '../orm/fields/relational-fields.js';
import type { Registry } from '../orm/registry.js';
import { ensureFunctions, type SqlFunction } from '../db/sql-functions.js';
import type { TableLockMode } from '../db/table-locks.js';

/** Tables whose every change moves the version, and tables where only some columns do. */
function watchedTables(registry: Registry): { table: string; columns?: string[] }[] {
  const join = (model: string, field: string) => (registry.meta(model).fields.get(field) as ManyToManyField).join.table;
  return [
    { table: registry.meta('ModelAccess').table },
    { table: registry.meta('RecordRule').table },
    { table: join('RecordRule', 'groups') },
    { table: join('User', 'groups') },
    { table: join('User', 'companies') },
    { table: join('ServiceAccount', 'groups') },
    { table: registry.meta('User').table, columns: ['active', 'company_id'] },
    // A key's scopes narrow its rights (readonly through the API; this covers any other path).
    { table: registry.meta('ApiKey').table, columns: ['scopes'] },
  ];
}

const BUMP_FUNCTION: SqlFunction = {
  name: 'ff_bump_security_version', args: '', returns: 'trigger', volatility: 'VOLATILE', parallel: 'UNSAFE',
  body: `
    BEGIN
      UPDATE ff_state SET security_version = security_version + 1 WHERE id = 1;
      RETURN NULL;
    END
    `,
};

/** `pg_trigger.tgtype` bits (PostgreSQL's trigger.h): an AFTER … FOR EACH STATEMENT trigger has none of ROW, BEFORE, INSTEAD. */
const TYPE_INSERT = 4;
const TYPE_DELETE = 8;
const TYPE_UPDATE = 16;
const TYPE_TRUNCATE = 32;

/** What the triggers need: the tables to lock first, and the statements, run by `apply`. */
export interface TriggerPlan {
  /** Existing tables whose trigger is missing (SHARE ROW EXCLUSIVE to create it) or differs (ACCESS EXCLUSIVE to drop it). */
  locks: Map<string, TableLockMode>;
  apply(): Promise<void>;
}

/**
 * Compares the triggers with the catalog (one query) and plans only what is missing or different:
 * `DROP TRIGGER` takes an ACCESS EXCLUSIVE lock on the table (`api_key`, `user`, … — tables every
 * credential check reads), so an upgrade that changes nothing must not touch them. Planned by the
 * installer with the schema, applied once core's tables exist (the counter column is
 * ensurePlatformState's); `created` are the tables the schema plan creates, which need no lock.
 */
export async function planSecurityTriggers(db: Kysely<any>, registry: Registry, created: ReadonlySet<string>): Promise<TriggerPlan> {
  const { rows } = await sql<{ table: string; type: number; enabled: string; calls_bump: boolean; columns: string[] }>`
    SELECT c.relname AS table, t.tgtype::int AS type, t.tgenabled::text AS enabled,
      t.tgfoid = to_regprocedure('ff_bump_security_version()') AS calls_bump,
      ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = t.tgrelid AND a.attnum = ANY(t.tgattr) ORDER BY 1) AS columns
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE t.tgname = 'ff_security_version' AND c.relnamespace = 'public'::regnamespace`.execute(db);
  const existing = new Map(rows.map((r) => [r.table, r]));
  const locks = new Map<string, TableLockMode>();
  const work: { table: string; columns?: string[]; replace: boolean }[] = [];
  for (const { table, columns } of watchedTables(registry)) {
    const have = existing.get(table);
    const type = columns ? TYPE_UPDATE : TYPE_INSERT | TYPE_DELETE | TYPE_UPDATE | TYPE_TRUNCATE;
    const want = columns ? [...columns].sort() : [];
    const same = have && have.type === type && have.enabled === 'O' && have.calls_bump
      && have.columns.length === want.length && have.columns.every((c, i) => c === want[i]);
    if (same) continue;
    work.push({ table, columns, replace: have !== undefined });
    if (!created.has(table)) locks.set(table, have ? 'ACCESS EXCLUSIVE' : 'SHARE ROW EXCLUSIVE');
  }
  return {
    locks,
    async apply() {
      await ensureFunctions(db, [BUMP_FUNCTION]);
      for (const { table, columns, replace } of work) {
        const events = columns
          ? sql`UPDATE OF ${sql.join(columns.map((c) => sql.id(c)))}`
          : sql`INSERT OR UPDATE OR DELETE OR TRUNCATE`;
        if (replace) await sql`DROP TRIGGER ff_security_version ON ${sql.table(table)}`.execute(db);
        await sql`CREATE TRIGGER ff_security_version AFTER ${events} ON ${sql.table(table)}
          FOR EACH STATEMENT EXECUTE FUNCTION ff_bump_security_version()`.execute(db);
      }
    },
  };
}
