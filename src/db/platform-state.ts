/**
 * The one platform table outside the module system, `ff_state`: whether the database is being
 * installed/upgraded (so every worker answers 503, not only the one doing it) and the registry
 * version (bumped by every install/upgrade, so other workers rebuild their registry).
 */
import { sql } from './sql-fragment.js';
import type { SqlExecutor } from './sql-executor.js';

export interface PlatformState {
  installing: boolean;
  registryVersion: number;
  securityVersion: number;
}

/**
 * Creates `ff_state` (and its row) where missing. The catalog is read first and nothing else runs
 * when all is there: `ALTER TABLE … ADD COLUMN IF NOT EXISTS` takes an ACCESS EXCLUSIVE lock on the
 * table every request reads even when the column exists, which would queue all traffic behind any
 * transaction still reading it, at every install.
 */
export async function ensurePlatformState(db: SqlExecutor): Promise<void> {
  const { rows: [present] } = await sql<{ table: boolean; security_version: boolean; credential_version: boolean }>`
    SELECT to_regclass('public.ff_state') IS NOT NULL AS table,
      EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('public.ff_state') AND attname = 'security_version' AND NOT attisdropped) AS security_version,
      EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('public.ff_state') AND attname = 'credential_version' AND NOT attisdropped) AS credential_version`.execute(db);
  if (!present?.table) {
    await sql`CREATE TABLE IF NOT EXISTS ff_state (
      id integer PRIMARY KEY CHECK (id = 1),
      installing boolean NOT NULL DEFAULT false,
      installing_since timestamptz,
      registry_version integer NOT NULL DEFAULT 0)`.execute(db);
  }
  // Moved by triggers on rights, rules and memberships (access/security-version.ts).
  if (!present?.security_version) {
    await sql`ALTER TABLE ff_state ADD COLUMN IF NOT EXISTS security_version integer NOT NULL DEFAULT 0`.execute(db);
  }
  // Moved by triggers on keys, accounts, sessions and users (auth/credential-version.ts).
  if (!present?.credential_version) {
    await sql`ALTER TABLE ff_state ADD COLUMN IF NOT EXISTS credential_version integer NOT NULL DEFAULT 0`.execute(db);
  }
  const { rows } = await sql`SELECT 1 FROM ff_state WHERE id = 1`.execute(db);
  if (!rows.length) await sql`INSERT INTO ff_state (id) VALUES (1) ON CONFLICT (id) DO NOTHING`.execute(db);
}

export async function readPlatformState(db: SqlExecutor): Promise<PlatformState> {
  const { rows } = await sql<{ installing: boolean; registry_version: number; security_version: number }>`
    SELECT installing, registry_version, security_version FROM ff_state WHERE id = 1`.execute(db);
  return { installing: rows[0]?.installing ?? false, registryVersion: rows[0]?.registry_version ?? 0, securityVersion: rows[0]?.security_version ?? 0 };
}

/** Committed on its own (outside the install transaction) so other workers see it at once. */
export async function setInstalling(db: SqlExecutor, installing: boolean): Promise<void> {
  await sql`UPDATE ff_state SET installing = ${installing}, installing_since = ${installing ? sql`now()` : null} WHERE id = 1`.execute(db);
}

export async function bumpRegistryVersion(db: SqlExecutor): Promise<void> {
  await sql`UPDATE ff_state SET registry_version = registry_version + 1 WHERE id = 1`.execute(db);
}

/** Module identifiers recorded as installed (empty before core is installed). */
export async function installedModules(db: SqlExecutor): Promise<string[]> {
  const { rows: exists } = await sql<{ t: string | null }>`SELECT to_regclass('public.module')::text AS t`.execute(db);
  if (!exists[0]?.t) return [];
  const { rows } = await sql<{ identifier: string }>`SELECT identifier FROM module WHERE state = 'installed'`.execute(db);
  return rows.map((r) => r.identifier);
}

/**
 * Advisory lock held by an installer (session-level) from before it raises the install flag until
 * it has lowered it (`modules/install-window.ts`): one installer per database at a time, across
 * workers and processes, and a flag with no holder is stale.
 */
export const INSTALL_LOCK = 7201984;

/**
 * Clears an `installing` flag left by an installer that died (its advisory lock is gone with its
 * session). Returns true when a stale flag was cleared.
 */
export async function clearStaleInstallFlag(db: SqlExecutor): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ free: boolean }>`SELECT pg_try_advisory_xact_lock(${INSTALL_LOCK}) AS free`.execute(trx);
    if (!rows[0]?.free) return false;
    const cleared = await sql`UPDATE ff_state SET installing = false, installing_since = NULL WHERE id = 1 AND installing`.execute(trx);
    return Number(cleared.numAffectedRows ?? 0) > 0;
  });
}
