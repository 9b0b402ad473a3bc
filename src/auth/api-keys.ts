/**
 * API keys (spec §5): `ff_` + 43 random base64url characters, shown once; only the SHA-256 hash
 * is stored (the key has 256 bits of entropy, so a fast hash is safe, and lookup by hash keeps
 * the comparison out of JavaScript — no timing leak). Each key belongs to a login-less service
 * account whose groups are the key's access. A worker may remember what a key resolved to, but
 * only with the database re-checking it in the request's first statement (`request-guard.ts`): a
 * revoked, expired or deactivated key is refused on the very next request, on every worker.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ValidationError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';
import { createRecords } from '../orm/write/create-records.js';
import { GUARD_SIGNATURE, type Principal } from './request-guard.js';

export const API_KEY_PREFIX = 'ff_';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, 10), hash: hashApiKey(key) };
}

export interface NewApiKey {
  name: string;
  /** Group identifiers (`core.group_admin`). */
  groups: readonly string[];
  /** ISO date or date-time; none = never expires. */
  expiresAt?: string | null;
}

/** Creates a service account with one key; returns the key (the only time it exists in clear). */
export async function createServiceAccountKey(input: NewApiKey): Promise<{ key: string; prefix: string; serviceAccountId: number; apiKeyId: number }> {
  const { registry } = currentEnv();
  const groupIds: number[] = [];
  for (const identifier of input.groups) {
    const [id] = await new QuerySet(registry.meta('Group')).filter({ identifier }).ids();
    if (id === undefined) throw new ValidationError(`No group with identifier '${identifier}'`);
    groupIds.push(id);
  }
  const [companyId] = await new QuerySet(registry.meta('Company')).order_by('id ASC').limit(1).ids();
  const [user] = await createRecords(registry.meta('User'), [{
    name: input.name, is_service_account: true, company: companyId ?? null,
    companies: companyId ? [companyId] : [], groups: groupIds,
  }]);
  const [account] = await createRecords(registry.meta('ServiceAccount'), [{
    name: input.name, groups: groupIds, company: companyId ?? null, user: user!.id,
  }]);
  const generated = generateApiKey();
  const [apiKey] = await createRecords(registry.meta('ApiKey'), [{
    name: input.name, prefix: generated.prefix, key_hash: generated.hash, service_account: account!.id,
    expires_at: input.expiresAt ?? null,
  }]);
  return { key: generated.key, prefix: generated.prefix, serviceAccountId: account!.id, apiKeyId: apiKey!.id };
}

export interface RequestState {
  installing: boolean;
  registryVersion: number;
  /** Moves with every change to rights, rules and memberships (`access/security-version.ts`). */
  securityVersion: number;
  /** Null when the key is unknown, revoked, expired or its account deactivated. */
  principal: Principal | null;
  /** The database has `ff_request_guard`, so the answer may be remembered (installed with core). */
  guardAvailable: boolean;
}

/**
 * One statement: the database's install flag and registry version, and the account of the key
 * with this hash if the key is valid right now (none when `keyHash` is null).
 */
export async function resolveApiKey(db: Kysely<any>, keyHash: string | null): Promise<RequestState> {
  const hash = keyHash ?? '';
  const { rows } = await sql<{
    installing: boolean; registry_version: number; security_version: number; user_id: number | null; company_id: number | null; account_id: number | null;
    guard: boolean;
  }>`SELECT s.installing, s.registry_version, s.security_version, a.user_id, a.company_id, a.id AS account_id,
      to_regprocedure(${GUARD_SIGNATURE}) IS NOT NULL AS guard
    FROM ff_state s
    LEFT JOIN api_key k ON k.key_hash = ${hash} AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
    LEFT JOIN service_account a ON a.id = k.service_account_id AND a.active IS TRUE
    WHERE s.id = 1`.execute(db);
  const row = rows[0];
  if (!row) return { installing: false, registryVersion: 0, securityVersion: 0, principal: null, guardAvailable: false };
  return {
    installing: row.installing,
    registryVersion: row.registry_version,
    securityVersion: row.security_version,
    principal: row.user_id !== null && row.account_id !== null
      ? { uid: row.user_id, companyId: row.company_id, serviceAccountId: row.account_id }
      : null,
    guardAvailable: row.guard,
  };
}
