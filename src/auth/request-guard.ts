/**
 * The request guard: how a worker may skip the per-request credential look-up without ever
 * trusting a stale answer. A worker remembers what a key resolved to (account, user, company,
 * registry version — `CredentialCache`); a later request with that key runs its first statement
 * with `ff_request_guard(…)` as an uncorrelated sub-select, which PostgreSQL evaluates once, before
 * the first row leaves the server. The function re-checks in the same snapshot exactly what the
 * full look-up checks (install flag, registry and security versions, key not revoked or expired,
 * account active and unchanged) and raises SQLSTATE `FFB00` otherwise, so the statement returns nothing and the
 * request is resolved again from scratch. Revocation therefore still takes effect on the very
 * next request, on every worker: the check is the database's, only the round trip is saved.
 *
 * Record writes carry it in their RETURNING clause (a refusal fails the whole statement, so the
 * write is undone). Any other statement runs the guard on its own first, and a request that ends
 * with the guard still pending (no statement, only empty results, or a failure) runs it before its
 * answer leaves — see `runGuarded`, `runSql` and `settleGuard` in `orm/execute-sql.ts`.
 */
import { sql as kyselySql, type Kysely, type RawBuilder } from 'kysely';
import { sql, type SqlFragment } from '../db/sql-fragment.js';
import { dropFunctionIfPresent, ensureFunctions, type SqlFunction } from '../db/sql-functions.js';

/** SQLSTATE raised by `ff_request_guard` (class FF is ours; PostgreSQL never uses it). */
export const GUARD_SQLSTATE = 'FFB00';

/** Whom a credential stands for, as the full look-up resolved it. */
export interface Principal {
  uid: number;
  companyId: number | null;
  /** The API key's service account; null for a person's session. */
  serviceAccountId: number | null;
  /** The session of a session token; absent for an API key. */
  sessionId?: number | null;
}

/** The request's pending re-check of a remembered credential; shared by every Env of the request. */
export class RequestGuard {
  /** True until a statement proved the check passed. */
  pending = true;

  constructor(private readonly check: SqlFragment<boolean>) {}

  /** The call, for a select list or a statement of its own; raises `FFB00` unless still valid. */
  call(): SqlFragment<boolean> {
    return this.check;
  }
}

/** The guard of a remembered API key. */
export function apiKeyGuard(keyHash: string, p: Principal, registryVersion: number, securityVersion: number): RequestGuard {
  return new RequestGuard(sql<boolean>`ff_request_guard(${keyHash}, ${p.serviceAccountId}::int, ${p.uid}::int, ${p.companyId}::int, ${registryVersion}::int, ${securityVersion}::int)`);
}

/** The guard of a remembered session token. */
export function sessionGuard(p: Principal, registryVersion: number, securityVersion: number): RequestGuard {
  return new RequestGuard(sql<boolean>`ff_session_guard(${p.sessionId}::int, ${p.uid}::int, ${p.companyId}::int, ${registryVersion}::int, ${securityVersion}::int)`);
}

/** Thrown when the guard refused: the remembered credential no longer holds; resolve again. */
export class StaleCredential extends Error {
  constructor() {
    super('The remembered credential or registry version is no longer current');
  }
}

/** True (in SQL) when the database has both guard functions, so a credential may be remembered. */
export function guardsInstalled(): RawBuilder<boolean> {
  return kyselySql<boolean>`(to_regprocedure('ff_request_guard(text,integer,integer,integer,integer,integer)') IS NOT NULL
    AND to_regprocedure('ff_session_guard(integer,integer,integer,integer,integer)') IS NOT NULL)`;
}

/**
 * The guard functions. The API key's conditions must stay those of `resolveApiKey` (a key the full
 * look-up accepts passes, any other fails). One query, so one plan, cached by PL/pgSQL per connection.
 */
const GUARD_FUNCTIONS: readonly SqlFunction[] = [
  {
    name: 'ff_request_guard',
    args: 'p_key_hash text, p_account integer, p_user integer, p_company integer, p_registry_version integer, p_security_version integer',
    returns: 'boolean', volatility: 'STABLE', parallel: 'RESTRICTED',
    body: `
    BEGIN
      PERFORM 1
        FROM ff_state s, api_key k JOIN service_account a ON a.id = k.service_account_id
        WHERE s.id = 1 AND NOT s.installing AND s.registry_version = p_registry_version
          AND s.security_version = p_security_version
          AND k.key_hash = p_key_hash AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
          AND a.id = p_account AND a.active IS TRUE AND a.user_id = p_user
          AND a.company_id IS NOT DISTINCT FROM p_company;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'request credential or state changed' USING ERRCODE = 'FFB00';
      END IF;
      RETURN true;
    END
    `,
  },
  {
    // The same for a session token: its conditions must stay those of `resolveSession`.
    name: 'ff_session_guard',
    args: 'p_session integer, p_user integer, p_company integer, p_registry_version integer, p_security_version integer',
    returns: 'boolean', volatility: 'STABLE', parallel: 'RESTRICTED',
    body: `
    BEGIN
      PERFORM 1
        FROM ff_state s, auth_session a JOIN "user" u ON u.id = a.user_id
        WHERE s.id = 1 AND NOT s.installing AND s.registry_version = p_registry_version
          AND s.security_version = p_security_version
          AND a.id = p_session AND a.revoked_at IS NULL AND a.expires_at > now()
          AND u.id = p_user AND u.active IS TRUE AND u.company_id IS NOT DISTINCT FROM p_company;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'request credential or state changed' USING ERRCODE = 'FFB00';
      END IF;
      RETURN true;
    END
    `,
  },
];

/**
 * Creates the guard functions, or replaces them, only where the catalog differs from the
 * definitions above: every request calls them, so an upgrade that did not change them leaves them
 * alone (`db/sql-functions.ts`).
 */
export async function installRequestGuard(db: Kysely<any>): Promise<void> {
  // The signature of the first version (before the security version), if a database has it.
  await dropFunctionIfPresent(db, 'ff_request_guard(text, integer, integer, integer, integer)');
  await ensureFunctions(db, GUARD_FUNCTIONS);
}
