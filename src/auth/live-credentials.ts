/**
 * Which of many credentials still hold, in one statement: a worker re-checks every open socket
 * of a database this way every couple of seconds (a revoked key or session, a sign-out or a
 * deactivated user closes its sockets, CONTRACTS C4), one query per database whatever the number
 * of sockets. The conditions must stay those of `resolveSession` and `resolveApiKey`.
 */
import { liveCredentialRows } from '../orm/system/credential-store.js';
import type { SqlExecutor } from '../db/sql-executor.js';

export interface LiveCredentials {
  /** The sessions of the question that are open, with their user active. */
  sessions: Set<number>;
  /** The API key hashes of the question whose key is valid and its account active. */
  keyHashes: Set<string>;
}

export async function liveCredentials(db: SqlExecutor, sessionIds: readonly number[], keyHashes: readonly string[]): Promise<LiveCredentials> {
  const live: LiveCredentials = { sessions: new Set(), keyHashes: new Set() };
  for (const r of await liveCredentialRows(db, sessionIds, keyHashes)) {
    if (r.session_id !== null) live.sessions.add(Number(r.session_id));
    if (r.key_hash !== null) live.keyHashes.add(r.key_hash);
  }
  return live;
}
