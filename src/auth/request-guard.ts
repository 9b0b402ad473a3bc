/**
 * The request guard: how a worker may skip the per-request credential look-up without ever
 * trusting a stale answer. A worker remembers what a key or session resolved to (account, user,
 * company, access, and the registry, security and credential versions it was read at —
 * `CredentialCache`); a later request with it runs its first statement with
 * `ff_request_guard(…)` as an uncorrelated sub-select, which PostgreSQL evaluates once, before the
 * first row leaves the server. The function compares, in the same snapshot, the install flag and
 * the three versions in `ff_state` — one row, since triggers move the credential version with
 * every change that could end a credential's validity (`credential-version.ts`) — and the
 * credential's expiry with the database's clock, and raises SQLSTATE `FFB00` otherwise, so the
 * statement returns nothing and the request is resolved again from scratch. Revocation therefore
 * still takes effect on the very next request, on every worker: the check is the database's, only
 * the round trip is saved.
 *
 * Record writes carry it in their RETURNING clause (a refusal fails the whole statement, so the
 * write is undone). A read carries the function's comparison written out instead, as a column
 * that is true, or false / null when the credential no longer holds; node then refuses the rows
 * and resolves the request again. The same snapshot, the same comparison, without a PL/pgSQL call:
 * ~15 µs of PostgreSQL CPU less per read (measured with prepared statements in psql: the function
 * +35 µs, the expression +20 µs over the statement alone). Any other statement runs the guard on its own first, and a request that ends
 * with the guard still pending (no statement, only empty results, or a failure) runs it before its
 * answer leaves — see `runGuarded`, `runSql` and `settleGuard` in `orm/execute-sql.ts`.
 */
import type { SqlExecutor } from '../db/sql-executor.js';
import { sql, type SqlFragment } from '../db/sql-fragment.js';
import { dropFunctionIfPresent, ensureFunctions, type SqlFunction } from '../db/sql-functions.js';
import type { RequestGuardPort } from '../orm/ports.js';
import { GUARD_SQLSTATE, StaleCredential } from '../orm/stale-credential.js';

// The refusal is the ORM's to recognise (every statement passes `orm/execute-sql.ts`).
export { GUARD_SQLSTATE, StaleCredential };

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
export class RequestGuard implements RequestGuardPort {
  /** True until a statement proved the check passed. */
  pending = true;

  constructor(
    private readonly check: SqlFragment<boolean>,
    private readonly inlineCheck: SqlFragment<boolean>,
  ) {}

  /** The call, for a select list or a statement of its own; raises `FFB00` unless still valid. */
  call(): SqlFragment<boolean> {
    return this.check;
  }

  /** The function's comparison written out, for a read's select list: true, or false / null. */
  inline(): SqlFragment<boolean> {
    return this.inlineCheck;
  }
}

/** The versions and expiry a credential was resolved with: what the guard compares. */
export interface ResolvedVersions {
  registryVersion: number;
  securityVersion: number;
  credentialVersion: number;
  /** The key's or session's expiry as the database gave it; null when it never expires. */
  expiresAt: string | Date | null;
}

/** The guard of a remembered API key or session. */
export function credentialGuard(v: ResolvedVersions): RequestGuard {
  return new RequestGuard(
    sql<boolean>`ff_request_guard(${v.registryVersion}::int, ${v.securityVersion}::int, ${v.credentialVersion}::int, ${v.expiresAt}::timestamptz)`,
    // GUARD_FUNCTION's query, as an expression: null when `ff_state` differs, false once expired.
    sql<boolean>`(SELECT COALESCE(${v.expiresAt}::timestamptz > now(), TRUE) FROM ff_state s
      WHERE s.id = 1 AND NOT s.installing AND s.registry_version = ${v.registryVersion}::int
        AND s.security_version = ${v.securityVersion}::int AND s.credential_version = ${v.credentialVersion}::int)`,
  );
}

/** True (in SQL) when the database has the guard function, so a credential may be remembered. */
export function guardsInstalled(): SqlFragment<boolean> {
  return sql<boolean>`(to_regprocedure('ff_request_guard(integer,integer,integer,timestamptz)') IS NOT NULL)`;
}

/**
 * The guard function. What it compares must cover every condition of `resolveApiKey` and
 * `resolveSession`: the versions in `ff_state` stand for all of them but the expiry, which time
 * alone changes. One query, so one plan, cached by PL/pgSQL per connection.
 */
const GUARD_FUNCTION: SqlFunction = {
  name: 'ff_request_guard',
  args: 'p_registry_version integer, p_security_version integer, p_credential_version integer, p_expires_at timestamp with time zone',
  returns: 'boolean', volatility: 'STABLE', parallel: 'RESTRICTED',
  body: `
    BEGIN
      PERFORM 1 FROM ff_state s
        WHERE s.id = 1 AND NOT s.installing AND s.registry_version = p_registry_version
          AND s.security_version = p_security_version AND s.credential_version = p_credential_version;
      IF NOT FOUND OR p_expires_at <= now() THEN
        RAISE EXCEPTION 'request credential or state changed' USING ERRCODE = '${GUARD_SQLSTATE}';
      END IF;
      RETURN true;
    END
    `,
};

/** Signatures of earlier guards: each read the key or session, its account and user itself. */
const EARLIER_GUARDS = [
  'ff_request_guard(text, integer, integer, integer, integer)',
  'ff_request_guard(text, integer, integer, integer, integer, integer)',
  'ff_session_guard(integer, integer, integer, integer, integer)',
];

/**
 * Creates the guard function, or replaces it, only where the catalog differs from the definition
 * above: every request calls it, so an upgrade that did not change it leaves it alone
 * (`db/sql-functions.ts`). Earlier guards are dropped: a worker of an older version finds none
 * of its own any more and resolves every request in full.
 */
export async function installRequestGuard(db: SqlExecutor): Promise<void> {
  for (const signature of EARLIER_GUARDS) await dropFunctionIfPresent(db, signature);
  await ensureFunctions(db, [GUARD_FUNCTION]);
}
