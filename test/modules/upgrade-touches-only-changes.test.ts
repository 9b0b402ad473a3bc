/**
 * An install or upgrade changes only what differs from the catalog (issue 10, item 4): an upgrade
 * that changes nothing runs no DDL and takes no table lock that could hold a request up — no
 * `CREATE INDEX IF NOT EXISTS` (a SHARE lock on every table), no `DROP TRIGGER` (ACCESS EXCLUSIVE
 * on `api_key`, `user`, …), no `CREATE OR REPLACE FUNCTION` of the request guards, no `ALTER TABLE
 * ff_state` — while a trigger, function or index that is missing or different is put back.
 */
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { sql } from '../../src/db/sql-fragment.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSTALL_LOCK } from '../../src/db/platform-state.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let kdb: SqlExecutor;

beforeAll(async () => {
  t = await testDatabase('full');
  kdb = (await t.platform.database(t.name)).executor;
  await t.platform.install(t.name, { init: ['sales'] });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/** Statements that change the schema or take table locks explicitly. */
const SCHEMA_CHANGE = /^\s*(create|alter|drop|lock|comment)\b/i;
/** Lock modes a request's reads and writes take, which never wait for one another. */
const REQUEST_MODES = new Set(['AccessShareLock', 'RowShareLock', 'RowExclusiveLock']);

/**
 * The relation locks held by the installer's session (the holder of `INSTALL_LOCK`) while
 * `fn` runs, sampled as fast as one connection allows; `samples` counts the looks that found it.
 */
async function installerLocks(fn: () => Promise<unknown>): Promise<{ locks: Set<string>; samples: number }> {
  const locks = new Set<string>();
  let samples = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      const { rows } = await sql<{ mode: string | null; relname: string | null }>`
        SELECT l.mode, c.relname FROM pg_locks i
        LEFT JOIN pg_locks l ON l.pid = i.pid AND l.locktype = 'relation'
        LEFT JOIN pg_class c ON c.oid = l.relation AND c.relnamespace = 'public'::regnamespace
        WHERE i.locktype = 'advisory' AND i.objid = ${INSTALL_LOCK} AND i.granted`.execute(kdb);
      if (rows.length) samples++;
      for (const r of rows) if (r.mode && r.relname) locks.add(`${r.mode} ${r.relname}`);
    }
  })();
  try {
    await fn();
  } finally {
    done = true;
    await sampler;
  }
  return { locks, samples };
}

describe('an upgrade touches only what changed', () => {
  it('an upgrade that changes nothing runs no DDL and takes no lock that would hold up a read or a write', async () => {
    await t.platform.install(t.name, { update: ['sales'] }); // anything left over from the first install
    let statements: string[] = [];
    const { locks, samples } = await installerLocks(async () => {
      ({ statements } = await t.countStatements(() => t.platform.install(t.name, { update: ['sales'] })));
    });
    expect(statements.filter((s) => SCHEMA_CHANGE.test(s))).toEqual([]);
    // The sampler saw the installer at work, and only ever with the locks requests take themselves.
    expect(samples).toBeGreaterThan(0);
    expect([...locks].filter((l) => !REQUEST_MODES.has(l.split(' ')[0]!))).toEqual([]);
  });

  it('puts back a dropped trigger, a changed guard function and a dropped index — and only those', async () => {
    await sql`DROP TRIGGER ff_security_version ON api_key`.execute(kdb);
    await sql`DROP TRIGGER ff_credential_version ON auth_session`.execute(kdb);
    await sql`CREATE OR REPLACE FUNCTION ff_request_guard(
        p_registry_version integer, p_security_version integer, p_credential_version integer, p_expires_at timestamptz)
      RETURNS boolean LANGUAGE plpgsql STABLE PARALLEL RESTRICTED AS $f$ BEGIN RETURN true; END $f$`.execute(kdb);
    await sql`DROP INDEX sale_order_date_order_idx`.execute(kdb);

    const { statements } = await t.countStatements(() => t.platform.install(t.name, { update: ['sales'] }));
    const changes = statements.filter((s) => SCHEMA_CHANGE.test(s)).map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 100));
    expect(changes).toEqual([
      'LOCK TABLE "sale_order" IN SHARE ROW EXCLUSIVE MODE',
      'LOCK TABLE "api_key" IN SHARE ROW EXCLUSIVE MODE',
      'LOCK TABLE "auth_session" IN SHARE ROW EXCLUSIVE MODE',
      'CREATE INDEX "sale_order_date_order_idx" ON "sale_order" ("date_order")',
      expect.stringMatching(/^CREATE OR REPLACE FUNCTION ff_request_guard\(/),
      expect.stringMatching(/^CREATE TRIGGER ff_security_version AFTER UPDATE OF "scopes" ON "api_key"/),
      expect.stringMatching(/^CREATE TRIGGER ff_credential_version AFTER UPDATE OF "revoked_at", "expires_at", "user_id" OR DELETE/),
    ]);

    const { rows: [state] } = await sql<{ trigger: boolean; credential: boolean; guard: string; index: boolean }>`
      SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'ff_security_version' AND tgrelid = 'api_key'::regclass) AS trigger,
        EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'ff_credential_version' AND tgrelid = 'auth_session'::regclass) AS credential,
        (SELECT prosrc FROM pg_proc WHERE proname = 'ff_request_guard') AS guard,
        to_regclass('sale_order_date_order_idx') IS NOT NULL AS index`.execute(kdb);
    expect(state).toMatchObject({ trigger: true, credential: true, index: true });
    expect(state!.guard).toContain('NOT s.installing');
    // Put back, the next upgrade has nothing to do again.
    const again = await t.countStatements(() => t.platform.install(t.name, { update: ['sales'] }));
    expect(again.statements.filter((s) => SCHEMA_CHANGE.test(s))).toEqual([]);
  });

  it('replaces a trigger that differs (disabled by hand) with an ACCESS EXCLUSIVE lock taken up front', async () => {
    await sql`ALTER TABLE "user" DISABLE TRIGGER ff_security_version`.execute(kdb);
    const { statements } = await t.countStatements(() => t.platform.install(t.name, { update: ['sales'] }));
    const changes = statements.filter((s) => SCHEMA_CHANGE.test(s)).map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 100));
    expect(changes).toEqual([
      'LOCK TABLE "user" IN ACCESS EXCLUSIVE MODE',
      'DROP TRIGGER ff_security_version ON "user"',
      expect.stringMatching(/^CREATE TRIGGER ff_security_version AFTER UPDATE OF "active", "comp/),
    ]);
    const { rows: [trigger] } = await sql<{ enabled: string }>`
      SELECT tgenabled::text AS enabled FROM pg_trigger WHERE tgname = 'ff_security_version' AND tgrelid = '"user"'::regclass`.execute(kdb);
    expect(trigger!.enabled).toBe('O');
  });
});
