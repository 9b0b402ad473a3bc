/**
 * The credential look-ups, each one statement on the pool, before any unit of work exists (the
 * registry a request runs with is chosen from what they answer): an API key, a session, the
 * credentials of open sockets, an API reference share. They sit side by side because their
 * conditions must stay the same — the key or session valid right now, its account or user active —
 * and every column they decide on must be watched by the credential version's triggers
 * (`auth/credential-version.ts`), which the request guard compares instead of reading them again.
 *
 * The tables are named as the core models declare them: these run before a registry is loaded.
 * Each look-up also answers whether the database has the request guard (`guard`); the caller
 * gives the check, as the guard is the credential layer's (`auth/request-guard.ts`).
 */
import type { SqlExecutor } from '../../db/sql-executor.js';
import { sql, type SqlFragment } from '../../db/sql-fragment.js';

/** What every full look-up reads from `ff_state`, with the credential's expiry. */
export interface CredentialStateRow {
  installing: boolean;
  registry_version: number;
  security_version: number;
  credential_version: number;
  /** The key's or session's expiry (null when there is none, or no valid credential). */
  expires_at: string | Date | null;
  guard: boolean;
}

export interface ApiKeyStateRow extends CredentialStateRow {
  user_id: number | null;
  company_id: number | null;
  account_id: number | null;
  scopes: unknown;
}

export interface SessionStateRow extends CredentialStateRow {
  user_id: number | null;
  company_id: number | null;
}

/**
 * The state and the account of the key with this hash if it is valid right now (none for ''),
 * stamping its `last_used_at` when older than `lastUsedSeconds`.
 */
export async function apiKeyState(
  db: SqlExecutor, keyHash: string, lastUsedSeconds: number, guardInstalled: SqlFragment<boolean>,
): Promise<ApiKeyStateRow | undefined> {
  const { rows } = await sql<ApiKeyStateRow>`WITH touched AS (
      UPDATE api_key SET last_used_at = now()
      WHERE key_hash = ${keyHash} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
        AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => ${lastUsedSeconds}))
      RETURNING id)
    SELECT s.installing, s.registry_version, s.security_version, s.credential_version, k.expires_at,
      a.user_id, a.company_id, a.id AS account_id, k.scopes, ${guardInstalled} AS guard
    FROM ff_state s
    LEFT JOIN api_key k ON k.key_hash = ${keyHash} AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
    LEFT JOIN service_account a ON a.id = k.service_account_id AND a.active IS TRUE
    WHERE s.id = 1`.execute(db);
  return rows[0];
}

/** The state and the session's user if session `sessionId` of `uid` is open and the user active. */
export async function sessionState(
  db: SqlExecutor, sessionId: number, uid: number, guardInstalled: SqlFragment<boolean>,
): Promise<SessionStateRow | undefined> {
  const { rows } = await sql<SessionStateRow>`SELECT s.installing, s.registry_version, s.security_version, s.credential_version, a.expires_at,
      u.id AS user_id, u.company_id, ${guardInstalled} AS guard
    FROM ff_state s
    LEFT JOIN auth_session a ON a.id = ${sessionId} AND a.user_id = ${uid} AND a.revoked_at IS NULL AND a.expires_at > now()
    LEFT JOIN "user" u ON u.id = a.user_id AND u.active IS TRUE
    WHERE s.id = 1`.execute(db);
  return rows[0];
}

/** One row per credential of the question that still holds: a session id, or a key hash. */
export interface LiveCredentialRow {
  session_id: number | null;
  key_hash: string | null;
}

/** Which of the sessions and key hashes still hold, in one statement (`sessionState`'s and `apiKeyState`'s conditions). */
export async function liveCredentialRows(db: SqlExecutor, sessionIds: readonly number[], keyHashes: readonly string[]): Promise<LiveCredentialRow[]> {
  const { rows } = await sql<LiveCredentialRow>`
    SELECT a.id AS session_id, NULL::text AS key_hash
      FROM auth_session a JOIN "user" u ON u.id = a.user_id
      WHERE a.id = ANY(${[...sessionIds]}::int[]) AND a.revoked_at IS NULL AND a.expires_at > now() AND u.active IS TRUE
    UNION ALL
    SELECT NULL, k.key_hash
      FROM api_key k JOIN service_account s ON s.id = k.service_account_id
      WHERE k.key_hash = ANY(${[...keyHashes]}::text[]) AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
        AND s.active IS TRUE`.execute(db);
  return rows;
}

/**
 * The API reference share with this token hash if it is valid right now (active, not expired),
 * stamping its `last_used_at` when older than `lastUsedSeconds`. Fails with the database's
 * `undefined_table` where core predates shares.
 */
export async function apiDocsShareState(
  db: SqlExecutor, tokenHash: string, lastUsedSeconds: number,
): Promise<{ id: number; expires_at: Date | string | null } | undefined> {
  const { rows } = await sql<{ id: number; expires_at: Date | string | null }>`WITH touched AS (
        UPDATE api_docs_share SET last_used_at = now()
        WHERE token = ${tokenHash} AND active IS TRUE AND (expires_at IS NULL OR expires_at > now())
          AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => ${lastUsedSeconds}))
        RETURNING id)
      SELECT id, expires_at FROM api_docs_share WHERE token = ${tokenHash} AND active IS TRUE AND (expires_at IS NULL OR expires_at > now())`.execute(db);
  return rows[0];
}
