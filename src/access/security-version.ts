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

/** (Re)creates the triggers; run by the installer once core's tables exist (the counter column is ensurePlatformState's). */
export async function installSecurityTriggers(db: Kysely<any>, registry: Registry): Promise<void> {
  await sql`CREATE OR REPLACE FUNCTION ff_bump_security_version() RETURNS trigger LANGUAGE plpgsql AS $bump$
    BEGIN
      UPDATE ff_state SET security_version = security_version + 1 WHERE id = 1;
      RETURN NULL;
    END
    $bump$`.execute(db);
  for (const { table, columns } of watchedTables(registry)) {
    const events = columns
      ? sql`UPDATE OF ${sql.join(columns.map((c) => sql.id(c)))}`
      : sql`INSERT OR UPDATE OR DELETE OR TRUNCATE`;
    await sql`DROP TRIGGER IF EXISTS ff_security_version ON ${sql.table(table)}`.execute(db);
    await sql`CREATE TRIGGER ff_security_version AFTER ${events} ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION ff_bump_security_version()`.execute(db);
  }
}
