/**
 * Which of many credentials still hold, in one statement: a worker re-checks every open socket
 * of a database this way every couple of seconds (a revoked key or session, a sign-out or a
 * deactivated user closes its sockets, CONTRACTS C4), one query per database whatever the number
 * of sockets. The conditions must stay those of `resolveSession` and `resolveApiKey`.
 */
import { sql } from '../db/sql-fragment.js';
import type { SqlExecutor } from '../db/sql-executor.js';

export interface LiveCredentials {
  /** The sessions of the question that are open, with their user active. */
  sessions: Set<number>;
  /** The API key hashes of the question whose key is valid and its account active. */
  keyHashes: Set<string>;
}

export async function liveCredentials(db: SqlExecutor, sessionIds: readonly number[], keyHashes: readonly string[]): Promise<LiveCredentials> {
  const { rows } = await sql<{ session_id: number | null; key_hash: string | null }>`
    SELECT a.id AS session_id, NULL::text AS key_hash
      FROM auth_session a JOIN "user" u ON u.id = a.user_id
      WHERE a.id = ANY(${[...sessionIds]}::int[]) AND a.revoked_at IS NULL AND a.expires_at > now() AND u.active IS TRUE
    UNION ALL
    SELECT NULL, k.key_hash
      FROM api_key k JOIN service_account s ON s.id = k.service_account_id
      WHERE k.key_hash = ANY(${[...keyHashes]}::text[]) AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
        AND s.active IS TRUE`.execute(db);
  const live: LiveCredentials = { sessions: new Set(), keyHashes: new Set() };
  for (const r of rows) {
    if (r.session_id !== null) live.sessions.add(Number(r.session_id));
    if (r.key_hash !== null) live.keyHashes.add(r.key_hash);
  }
  return live;
}
