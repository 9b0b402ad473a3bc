/**
 * Counters in `ff_state` moved by statement-level triggers: the security version (who may do what,
 * `access/security-version.ts`) and the credential version (which keys and sessions are valid,
 * `auth/credential-version.ts`). Workers cache what a counter covers and the request guard compares
 * the counters in the request's first statement, so a change holds from the very next request on
 * every worker. Triggers, not ORM code, move them, so no write path (raw SQL, data files, a future
 * endpoint) can forget to.
 */
import { sql } from './sql-fragment.js';
import type { SqlExecutor } from './sql-executor.js';
import { ensureFunctions, type SqlFunction } from './sql-functions.js';
import type { TableLockMode } from './table-locks.js';

/** A table whose changes move a counter. */
export interface WatchedTable {
  table: string;
  /**
   * Only an UPDATE of one of these columns moves it (and, with `removals`, any DELETE or TRUNCATE);
   * absent: every INSERT, UPDATE, DELETE and TRUNCATE does.
   */
  columns?: string[];
  removals?: boolean;
}

/** A counter: its column in `ff_state`, the name of its triggers, and the tables they watch (our constants, never input). */
export interface Counter {
  column: string;
  trigger: string;
  watched: readonly WatchedTable[];
}

/** What the triggers need: the tables to lock first, and the statements, run by `apply`. */
export interface TriggerPlan {
  /** Existing tables whose trigger is missing (SHARE ROW EXCLUSIVE to create it) or differs (ACCESS EXCLUSIVE to drop it). */
  locks: Map<string, TableLockMode>;
  apply(): Promise<void>;
}

/** `pg_trigger.tgtype` bits (PostgreSQL's trigger.h): an AFTER … FOR EACH STATEMENT trigger has none of ROW, BEFORE, INSTEAD. */
const TYPE_INSERT = 4;
const TYPE_DELETE = 8;
const TYPE_UPDATE = 16;
const TYPE_TRUNCATE = 32;

/** The trigger function of a counter: one UPDATE of the `ff_state` row per statement. */
function bumpFunction(counter: Counter): SqlFunction {
  return {
    name: `ff_bump_${counter.column}`, args: '', returns: 'trigger', volatility: 'VOLATILE', parallel: 'UNSAFE',
    body: `
    BEGIN
      UPDATE ff_state SET ${counter.column} = ${counter.column} + 1 WHERE id = 1;
      RETURN NULL;
    END
    `,
  };
}

function eventsOf(w: WatchedTable): { type: number; columns: string[] } {
  if (!w.columns) return { type: TYPE_INSERT | TYPE_DELETE | TYPE_UPDATE | TYPE_TRUNCATE, columns: [] };
  return { type: TYPE_UPDATE | (w.removals ? TYPE_DELETE | TYPE_TRUNCATE : 0), columns: [...w.columns].sort() };
}

/**
 * Compares a counter's triggers with the catalog (one query) and plans only what is missing or
 * different: `DROP TRIGGER` takes an ACCESS EXCLUSIVE lock on the table (`api_key`, `user`, …,
 * tables every credential check reads), so an upgrade that changes nothing must not touch them.
 * Planned by the installer with the schema, applied once the tables exist (the counter's column is
 * `ensurePlatformState`'s); `created` are the tables the schema plan creates, which need no lock.
 */
export async function planCounterTriggers(db: SqlExecutor, counter: Counter, created: ReadonlySet<string>): Promise<TriggerPlan> {
  const bump = bumpFunction(counter);
  const { rows } = await sql<{ table: string; type: number; enabled: string; calls_bump: boolean; columns: string[] }>`
    SELECT c.relname AS table, t.tgtype::int AS type, t.tgenabled::text AS enabled,
      t.tgfoid = to_regprocedure(${`${bump.name}()`}) AS calls_bump,
      ARRAY(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = t.tgrelid AND a.attnum = ANY(t.tgattr) ORDER BY 1) AS columns
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE t.tgname = ${counter.trigger} AND c.relnamespace = 'public'::regnamespace`.execute(db);
  const existing = new Map(rows.map((r) => [r.table, r]));
  const locks = new Map<string, TableLockMode>();
  const work: { watched: WatchedTable; replace: boolean }[] = [];
  for (const watched of counter.watched) {
    const have = existing.get(watched.table);
    const want = eventsOf(watched);
    const same = have && have.type === want.type && have.enabled === 'O' && have.calls_bump
      && have.columns.length === want.columns.length && have.columns.every((c, i) => c === want.columns[i]);
    if (same) continue;
    work.push({ watched, replace: have !== undefined });
    if (!created.has(watched.table)) locks.set(watched.table, have ? 'ACCESS EXCLUSIVE' : 'SHARE ROW EXCLUSIVE');
  }
  return {
    locks,
    async apply() {
      await ensureFunctions(db, [bump]);
      for (const { watched: { table, columns, removals }, replace } of work) {
        const events = !columns
          ? sql`INSERT OR UPDATE OR DELETE OR TRUNCATE`
          : sql`UPDATE OF ${sql.join(columns.map((c) => sql.id(c)))}${removals ? sql` OR DELETE OR TRUNCATE` : sql``}`;
        if (replace) await sql`DROP TRIGGER ${sql.raw(counter.trigger)} ON ${sql.table(table)}`.execute(db);
        await sql`CREATE TRIGGER ${sql.raw(counter.trigger)} AFTER ${events} ON ${sql.table(table)}
          FOR EACH STATEMENT EXECUTE FUNCTION ${sql.raw(bump.name)}()`.execute(db);
      }
    },
  };
}
