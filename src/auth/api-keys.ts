/**
 * API keys (spec §5): `ff_` + 43 random base64url characters, shown once; only the SHA-256 hash
 * is stored (the key has 256 bits of entropy, so a fast hash is safe, and lookup by hash keeps
 * the comparison out of JavaScript — no timing leak). Each key belongs to a login-less service
 * account (one account may hold several keys, for rotation) whose groups are the key's access,
 * optionally narrowed by the key's `scopes`. Creating, listing and revoking keys need the caller's
 * rights on ApiKey (administrators'). A worker may remember what a key resolved to, but
 * only with the database re-checking it in the request's first statement (`request-guard.ts`): a
 * revoked, expired or deactivated key is refused on the very next request, on every worker.
 */
import { hash, randomBytes } from 'node:crypto';
import type { SqlExecutor } from '../db/sql-executor.js';
import { PERMISSIONS, type Permission } from '../access/access-profile.js';
import { assertRight } from '../access/record-access.js';
import { assertRecordsAllowed } from '../access/record-checks.js';
import { BadRequest, NotFound } from '../errors.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';
import { apiKeyState, type CredentialStateRow } from '../orm/system/credential-store.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeRecords } from '../orm/write/write-records.js';
import { guardsInstalled, type Principal } from './request-guard.js';

export const API_KEY_PREFIX = 'ff_';

/** Hashed on every request: `crypto.hash` is one call without a Hash object (2.5× faster measured). */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, 10), hash: hashApiKey(key) };
}

/** A key's narrowing on one model: only these rights, and only where its account has them too. */
export interface ApiKeyScope {
  model: string;
  perms: Permission[];
}

/** At most this many scope entries per key, group identifiers per request (bounds the work). */
export const MAX_SCOPES = 200;
export const MAX_GROUPS = 100;

export interface NewApiKey {
  /** The key's label; also the new account's name when a new account is created. */
  name: string;
  /** Group identifiers (`core.group_admin`) of a new account; omitted or empty with `serviceAccountId`. */
  groups?: readonly string[];
  /** ISO date or date-time in the future; none = never expires. */
  expiresAt?: string | null;
  /** Adds the key to this existing, active account (rotation) instead of creating one. */
  serviceAccountId?: number | null;
  /** Narrows the key below its account's groups; none = exactly the account's access. Checked here (it may come from a request body). */
  scopes?: readonly ApiKeyScope[] | null;
}

export interface CreatedApiKey {
  /** The key in clear: the only time it exists outside the caller's hands. */
  key: string;
  prefix: string;
  serviceAccountId: number;
  apiKeyId: number;
  /** ISO 8601 UTC, as the API writes Datetime values; null = never expires. */
  expiresAt: string | null;
}

/**
 * Creates a key — for a new login-less service account (with its `User` identity) or, given
 * `serviceAccountId`, for an existing one. The caller needs the `create` right on ApiKey; only
 * then are groups resolved and records written elevated (the caller may lack rights on User and
 * Group). Everything is checked before the first write.
 */
export async function createServiceAccountKey(input: NewApiKey): Promise<CreatedApiKey> {
  const { registry, companyId: callerCompanyId } = currentEnv();
  assertRight(registry.meta('ApiKey'), 'create');
  const name = checkName(input.name);
  const expiresAt = checkExpiry(input.expiresAt);
  const scopes = checkScopes(input.scopes);
  const groups = [...new Set(input.groups ?? [])];
  if (groups.length > MAX_GROUPS) throw new BadRequest(`'groups' may hold at most ${MAX_GROUPS} identifiers`, { field: 'groups' });

  let accountId: number;
  if (input.serviceAccountId !== undefined && input.serviceAccountId !== null) {
    if (groups.length) {
      throw new BadRequest("'groups' cannot be combined with 'service_account': the new key carries that account's groups", { field: 'groups' });
    }
    accountId = await activeAccount(input.serviceAccountId);
  } else {
    if (!groups.length) throw new BadRequest("'groups' needs at least one group identifier for a new service account", { field: 'groups' });
    accountId = await withEnv({ su: true }, async () => {
      const groupIds = await groupIdsOf(groups);
      const [firstCompany] = await new QuerySet(registry.meta('Company')).order_by('id ASC').limit(1).ids();
      // The caller's current company, so that the caller (company isolation) sees the new account.
      const companyId = callerCompanyId ?? firstCompany ?? null;
      const [user] = await createRecords(registry.meta('User'), [{
        name, is_service_account: true, company: companyId, companies: companyId ? [companyId] : [], groups: groupIds,
      }]);
      const [account] = await createRecords(registry.meta('ServiceAccount'), [{
        name, groups: groupIds, company: companyId, user: user!.id,
      }]);
      return account!.id;
    });
  }
  const generated = generateApiKey();
  const apiKeyId = await withEnv({ su: true }, async () => {
    const [apiKey] = await createRecords(registry.meta('ApiKey'), [{
      name, prefix: generated.prefix, key_hash: generated.hash, service_account: accountId, expires_at: expiresAt, scopes,
    }]);
    return apiKey!.id;
  });
  // As the caller again: the new key must pass the caller's create rules on ApiKey, like any
  // create (a refusal rolls the whole unit of work back — account and user included).
  await assertRecordsAllowed(registry.meta('ApiKey'), 'create', [apiKeyId]);
  return { key: generated.key, prefix: generated.prefix, serviceAccountId: accountId, apiKeyId, expiresAt };
}

/** One entry of the key list: everything about a key except the key and its hash. */
export interface ApiKeyInfo {
  id: number;
  name: string;
  prefix: string;
  service_account: { id: number; display_name: string } | null;
  created_date: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  scopes: ApiKeyScope[] | null;
}

/** Every key the caller may read (`read` right on ApiKey), newest first, revoked ones included. */
export async function listApiKeys(): Promise<ApiKeyInfo[]> {
  const meta = currentEnv().registry.meta('ApiKey');
  assertRight(meta, 'read');
  const rows = await new QuerySet(meta).order_by('created_date DESC', 'id DESC')
    .read(['name', 'prefix', 'service_account', 'created_date', 'last_used_at', 'expires_at', 'revoked_at', 'scopes']);
  return rows.map((r) => {
    const account = r.service_account as { id: number; display_name: string } | null;
    return {
      id: r.id as number,
      name: r.name as string,
      prefix: r.prefix as string,
      service_account: account && { id: account.id, display_name: account.display_name },
      created_date: r.created_date as string,
      last_used_at: r.last_used_at as string | null,
      expires_at: r.expires_at as string | null,
      revoked_at: r.revoked_at as string | null,
      scopes: r.scopes as ApiKeyScope[] | null,
    };
  });
}

/**
 * Revokes a key (`write` right on ApiKey): refused from the very next request on. Idempotent —
 * revoking a revoked key changes nothing and keeps its first `revoked_at`, so a retried DELETE
 * is harmless. Unknown (or hidden from the caller) → 404.
 */
export async function revokeApiKey(id: number): Promise<{ id: number; revokedAt: string }> {
  const meta = currentEnv().registry.meta('ApiKey');
  assertRight(meta, 'write');
  const [row] = await new QuerySet(meta).filter({ id }).read(['revoked_at']);
  if (!row) throw new NotFound(`API key ${id} does not exist`);
  if (row.revoked_at) return { id, revokedAt: row.revoked_at as string };
  const revokedAt = new Date().toISOString();
  await writeRecords(meta, [id], { revoked_at: revokedAt });
  return { id, revokedAt };
}

function checkName(value: unknown): string {
  if (value === undefined || value === null || (typeof value === 'string' && !value.trim())) throw new BadRequest("'name' is required", { field: 'name' });
  if (typeof value !== 'string') throw new BadRequest("'name' must be a string", { field: 'name' });
  if ([...value].length > 255) throw new BadRequest("'name' may hold at most 255 characters", { field: 'name' });
  return value;
}

const EXPIRY_FORMAT = "'expires_at' must be an ISO 8601 date or date-time, e.g. 2030-01-31 or 2030-01-31T12:00:00Z";

/** The expiry as the API writes Datetime values (a bare date is midnight UTC), or null. */
function checkExpiry(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new BadRequest(EXPIRY_FORMAT, { field: 'expires_at' });
  let normalized: string;
  try {
    // The Datetime field's own parser: one notion of a valid date-time across the API.
    normalized = currentEnv().registry.meta('ApiKey').fields.get('expires_at')!.toColumn(value) as string;
  } catch {
    throw new BadRequest(EXPIRY_FORMAT, { field: 'expires_at' });
  }
  if (normalized === null || normalized === undefined) throw new BadRequest(EXPIRY_FORMAT, { field: 'expires_at' });
  if (Date.parse(normalized) <= Date.now()) throw new BadRequest(`'expires_at' must be in the future (got ${normalized})`, { field: 'expires_at' });
  return normalized;
}

const PERMS = PERMISSIONS.join(', ');

/** Scopes as given, checked entry by entry; null when none were given. */
function checkScopes(value: unknown): ApiKeyScope[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new BadRequest("'scopes' must be an array of {model, perms} objects", { field: 'scopes' });
  // An empty list would read as "no access" to some and "no narrowing" to others: refuse it.
  if (!value.length) throw new BadRequest("'scopes' must not be empty: omit it for a key with its account's full access", { field: 'scopes' });
  if (value.length > MAX_SCOPES) throw new BadRequest(`'scopes' may hold at most ${MAX_SCOPES} entries`, { field: 'scopes' });
  const { registry } = currentEnv();
  const seen = new Set<string>();
  return value.map((entry: unknown, i): ApiKeyScope => {
    const at = `scopes[${i}]`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new BadRequest(`${at} must be an object {model, perms}`);
    const { model, perms, ...rest } = entry as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new BadRequest(`${at} has an unknown key '${extra.slice(0, 40)}': expected model and perms`);
    if (typeof model !== 'string' || !model) throw new BadRequest(`${at}.model must be a model name`);
    if (!registry.has(model)) throw new BadRequest(`${at}.model: model '${model.slice(0, 80)}' does not exist`);
    if (seen.has(model)) throw new BadRequest(`${at}.model: model '${model}' is listed more than once`);
    seen.add(model);
    if (!Array.isArray(perms) || !perms.length) throw new BadRequest(`${at}.perms must be a non-empty array of ${PERMS}`);
    const given = new Set<Permission>();
    for (const perm of perms as unknown[]) {
      if (typeof perm !== 'string' || !(PERMISSIONS as readonly string[]).includes(perm)) {
        throw new BadRequest(`${at}.perms: '${String(perm).slice(0, 40)}' is not one of ${PERMS}`);
      }
      if (given.has(perm as Permission)) throw new BadRequest(`${at}.perms lists '${perm}' more than once`);
      given.add(perm as Permission);
    }
    return { model, perms: [...given] };
  });
}

/** Ids of the groups, in the order given; 400 naming the first unknown identifier. */
async function groupIdsOf(identifiers: readonly string[]): Promise<number[]> {
  const rows = await new QuerySet(currentEnv().registry.meta('Group')).filter({ identifier__in: [...identifiers] }).read(['identifier']);
  const byIdentifier = new Map(rows.map((r) => [r.identifier as string, r.id as number]));
  return identifiers.map((identifier) => {
    const id = byIdentifier.get(identifier);
    if (id === undefined) throw new BadRequest(`No group with identifier '${identifier.slice(0, 80)}'`);
    return id;
  });
}

/**
 * The existing account a key is added to, looked up as the caller: an account its record rules
 * or company isolation hide is as absent as a missing one (404). A deactivated account → 400.
 */
async function activeAccount(id: number): Promise<number> {
  const [account] = await new QuerySet(currentEnv().registry.meta('ServiceAccount')).with_archived().filter({ id }).read(['active']);
  if (!account) throw new NotFound(`Service account ${id} does not exist`);
  if (account.active !== true) throw new BadRequest(`Service account ${id} is deactivated: reactivate it before adding a key`);
  return id;
}

export interface RequestState {
  installing: boolean;
  registryVersion: number;
  /** Moves with every change to rights, rules and memberships (`access/security-version.ts`). */
  securityVersion: number;
  /** Moves with every change that could end a key's or session's validity (`credential-version.ts`). */
  credentialVersion: number;
  /** When the key or session expires (null: never, or no principal). */
  expiresAt: string | Date | null;
  /** Null when the key is unknown, revoked, expired or its account deactivated. */
  principal: Principal | null;
  /** The key's scopes, which narrow its account's rights; null (or absent) = the account's rights. */
  scopes?: ApiKeyScope[] | null;
  /** The database has `ff_request_guard`, so the answer may be remembered (installed with core). */
  guardAvailable: boolean;
}

/** How stale `last_used_at` may get: it is written at most once a minute per key. */
export const LAST_USED_RESOLUTION_SECONDS = 60;

/**
 * One statement: the database's install flag and versions, and the account and scopes of the key
 * with this hash if the key is valid right now (none when `keyHash` is null). It also stamps the
 * key's `last_used_at`, at most once a minute (a worker resolves a remembered key again at least
 * that often, see `CredentialCache`). Every column it decides on must be watched by the credential
 * version's triggers (`credential-version.ts`), which the request guard compares.
 */
export async function resolveApiKey(db: SqlExecutor, keyHash: string | null): Promise<RequestState> {
  const row = await apiKeyState(db, keyHash ?? '', LAST_USED_RESOLUTION_SECONDS, guardsInstalled());
  const principal = row && row.user_id !== null && row.account_id !== null
    ? { uid: row.user_id, companyId: row.company_id, serviceAccountId: row.account_id }
    : null;
  return { ...requestState(row, principal), scopes: parseScopes(row?.scopes) };
}


/** The request state of a full look-up's row (none: a database without `ff_state`'s row). */
export function requestState(row: CredentialStateRow | undefined, principal: Principal | null): RequestState {
  if (!row) return { installing: false, registryVersion: 0, securityVersion: 0, credentialVersion: 0, expiresAt: null, principal: null, guardAvailable: false };
  return {
    installing: row.installing,
    registryVersion: row.registry_version,
    securityVersion: row.security_version,
    credentialVersion: row.credential_version,
    expiresAt: row.expires_at,
    principal,
    guardAvailable: row.guard,
  };
}

/** Stored scopes (validated when the key was created), or null for a key without scopes. */
function parseScopes(raw: unknown): ApiKeyScope[] | null {
  const value = typeof raw === 'string' ? JSON.parse(raw) : raw;
  return Array.isArray(value) ? (value as ApiKeyScope[]) : null;
}
