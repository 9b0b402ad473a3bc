/**
 * The credential version: a counter in `ff_state` that every change able to end a credential's
 * validity moves — a key revoked, re-dated, re-hashed or moved to another account; an account
 * deactivated or given another user or company; a session revoked, re-dated or given another user;
 * a user deactivated or moved to another company; any of them deleted. A worker remembers a
 * credential with the version it was resolved at, and the request guard compares that version
 * (one row, `ff_state`) instead of reading the key, account, session and user again: a change
 * still holds from the very next request on every worker, since the counter moves in the same
 * transaction as the change. A new key or session moves nothing (no worker remembers it yet), nor
 * does `last_used_at`. Moved by statement-level triggers (`db/counter-triggers.ts`).
 */
import type { SqlExecutor } from '../db/sql-executor.js';
import type { Registry } from '../orm/registry.js';
import { planCounterTriggers, type Counter, type TriggerPlan } from '../db/counter-triggers.js';

/** The columns of each credential table that the full look-ups (`resolveApiKey`, `resolveSession`) read to decide validity. */
function credentialVersion(registry: Registry): Counter {
  return {
    column: 'credential_version',
    trigger: 'ff_credential_version',
    watched: [
      { table: registry.meta('ApiKey').table, columns: ['key_hash', 'revoked_at', 'expires_at', 'service_account_id'], removals: true },
      { table: registry.meta('ServiceAccount').table, columns: ['active', 'user_id', 'company_id'], removals: true },
      { table: registry.meta('AuthSession').table, columns: ['revoked_at', 'expires_at', 'user_id'], removals: true },
      { table: registry.meta('User').table, columns: ['active', 'company_id'], removals: true },
    ],
  };
}

/** The credential version's triggers, planned by the installer with the schema (see `planCounterTriggers`). */
export function planCredentialTriggers(db: SqlExecutor, registry: Registry, created: ReadonlySet<string>): Promise<TriggerPlan> {
  return planCounterTriggers(db, credentialVersion(registry), created);
}
