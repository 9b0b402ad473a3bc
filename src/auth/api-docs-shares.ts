/**
 * API reference shares (spec §1, §5; CONTRACTS C2 "API reference"): a token that opens the
 * database's `/api-docs` — the OpenAPI document and the page rendering it — and nothing else.
 * Managed like API keys: `ffdocs_` + 43 random base64url characters, shown once; only the SHA-256
 * hash is stored (256 bits of entropy make a fast hash safe, and the lookup by hash keeps the
 * comparison out of JavaScript). Creating, listing and revoking need the caller's rights on
 * ApiDocsShare (administrators'). A share is checked against the database on every request, so a
 * revoked or expired one — and every cookie it already issued — is refused at once.
 */
import { hash, randomBytes } from 'node:crypto';
import type { SqlExecutor } from '../db/sql-executor.js';
import { assertRight } from '../access/record-access.js';
import { assertRecordsAllowed } from '../access/record-checks.js';
import { sqlState } from '../db/database-errors.js';
import { BadRequest, NotFound } from '../errors.js';
import { currentEnv, withEnv } from '../orm/env.js';
import { QuerySet } from '../orm/queryset.js';
import { apiDocsShareState } from '../orm/system/credential-store.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeRecords } from '../orm/write/write-records.js';

export const API_DOCS_TOKEN_PREFIX = 'ffdocs_';
const MODEL = 'ApiDocsShare';

export function hashShareToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** A token as a share's URL carries it: the prefix and 43 base64url characters. */
export function isShareTokenShaped(token: string): boolean {
  return token.startsWith(API_DOCS_TOKEN_PREFIX) && /^[A-Za-z0-9_-]{43}$/.test(token.slice(API_DOCS_TOKEN_PREFIX.length));
}

export interface NewApiDocsShare {
  name: unknown;
  /** ISO date or date-time in the future; none = never expires. */
  expiresAt?: unknown;
}

export interface CreatedApiDocsShare {
  id: number;
  name: string;
  /** The token in clear: the only time it exists outside the caller's hands. */
  token: string;
  /** ISO 8601 UTC; null = never expires. */
  expiresAt: string | null;
}

/** Creates a share (`create` right on ApiDocsShare); everything is checked before the write. */
export async function createApiDocsShare(input: NewApiDocsShare): Promise<CreatedApiDocsShare> {
  const meta = currentEnv().registry.meta(MODEL);
  assertRight(meta, 'create');
  const name = checkName(input.name);
  const expiresAt = checkExpiry(input.expiresAt);
  const token = API_DOCS_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  // Written as the platform (`token` is internal, `expires_at` read-only to the API), then checked
  // against the caller's create rules like any create: a refusal rolls the unit of work back.
  const id = await withEnv({ su: true }, async () => {
    const [share] = await createRecords(meta, [{ name, token: hashShareToken(token), expires_at: expiresAt, active: true }]);
    return share!.id;
  });
  await assertRecordsAllowed(meta, 'create', [id]);
  return { id, name, token, expiresAt };
}

/** One entry of the share list: everything but the token's hash. */
export interface ApiDocsShareInfo {
  id: number;
  name: string;
  expires_at: string | null;
  active: boolean;
  last_used_at: string | null;
  created_date: string;
  created_by: { id: number; display_name: string | null } | null;
}

/** Every share the caller may read (`read` right), newest first, revoked ones included. */
export async function listApiDocsShares(): Promise<ApiDocsShareInfo[]> {
  const meta = currentEnv().registry.meta(MODEL);
  assertRight(meta, 'read');
  const rows = await new QuerySet(meta).with_archived().order_by('created_date DESC', 'id DESC')
    .read(['name', 'expires_at', 'active', 'last_used_at', 'created_date', 'created_by']);
  return rows.map((r) => {
    const by = r.created_by as { id: number; display_name: string | null } | null;
    return {
      id: r.id as number,
      name: r.name as string,
      expires_at: r.expires_at as string | null,
      active: r.active === true,
      last_used_at: r.last_used_at as string | null,
      created_date: r.created_date as string,
      created_by: by && { id: by.id, display_name: by.display_name },
    };
  });
}

/**
 * Revokes a share (`write` right): refused from the very next request on, cookies it issued
 * included. Idempotent; unknown or hidden from the caller → 404. The row stays, for the record.
 */
export async function revokeApiDocsShare(id: number): Promise<void> {
  const meta = currentEnv().registry.meta(MODEL);
  assertRight(meta, 'write');
  const [row] = await new QuerySet(meta).with_archived().filter({ id }).read(['active']);
  if (!row) throw new NotFound(`API reference share ${id} does not exist`);
  if (row.active !== true) return;
  await writeRecords(meta, [id], { active: false });
}

/** How stale `last_used_at` may get: it is written at most once a minute per share. */
const LAST_USED_RESOLUTION_SECONDS = 60;

/** A share that is valid right now. */
export interface ValidShare {
  id: number;
  /** Epoch milliseconds; null = never expires. */
  expiresAt: number | null;
}

/**
 * The share `token` stands for if it is valid right now (active, not expired), or null.
 * One statement, outside any unit of work (the docs routes have no principal); it also stamps
 * `last_used_at`, at most once a minute. A database whose core predates shares has none.
 */
export async function resolveApiDocsShare(db: SqlExecutor, token: string): Promise<ValidShare | null> {
  if (!isShareTokenShaped(token)) return null;
  const hash = hashShareToken(token);
  try {
    const row = await apiDocsShareState(db, hash, LAST_USED_RESOLUTION_SECONDS);
    if (!row) return null;
    return { id: row.id, expiresAt: row.expires_at === null ? null : new Date(row.expires_at).getTime() };
  } catch (err) {
    if (sqlState(err) === '42P01') return null; // undefined_table: core not upgraded yet
    throw err;
  }
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
  let normalized: unknown;
  try {
    // The Datetime field's own parser: one notion of a valid date-time across the API.
    normalized = currentEnv().registry.meta(MODEL).fields.get('expires_at')!.toColumn(value);
  } catch {
    throw new BadRequest(EXPIRY_FORMAT, { field: 'expires_at' });
  }
  if (typeof normalized !== 'string') throw new BadRequest(EXPIRY_FORMAT, { field: 'expires_at' });
  if (Date.parse(normalized) <= Date.now()) throw new BadRequest(`'expires_at' must be in the future (got ${normalized})`, { field: 'expires_at' });
  return normalized;
}
