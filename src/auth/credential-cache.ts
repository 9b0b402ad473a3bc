/**
 * What API keys and sessions resolved to on this worker (principal, access profile, and the
 * versions and expiry they were read with), so a repeat request can skip the look-up round trips.
 * Only a hint: every request that uses an entry is checked again by the database in its first
 * statement (`request-guard.ts`), and an entry the check refuses is dropped. Keyed by database and
 * key hash (never the key); bounded, least recently used out first.
 */
import type { AccessProfile } from '../access/access-profile.js';
import type { Principal, ResolvedVersions } from './request-guard.js';

export interface RememberedCredential {
  principal: Principal;
  /** What the request guard compares (`credentialGuard`). */
  versions: ResolvedVersions;
  access: AccessProfile;
}

interface Entry {
  credential: RememberedCredential;
  at: number;
}

export class CredentialCache {
  /** Least recently used first (a Map keeps insertion order; hits re-insert). */
  readonly #entries = new Map<string, Entry>();

  constructor(
    readonly maxEntries = 10_000,
    /**
     * How long an entry is used before the credential is resolved in full again: the full look-up
     * stamps an API key's `last_used_at` (at most once a minute), so that stays about that fresh.
     */
    readonly maxAgeMs = 60_000,
  ) {}

  get(dbName: string, keyHash: string): RememberedCredential | undefined {
    const id = `${dbName}\0${keyHash}`;
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    this.#entries.delete(id);
    if (Date.now() - entry.at > this.maxAgeMs) return undefined;
    this.#entries.set(id, entry);
    return entry.credential;
  }

  set(dbName: string, keyHash: string, credential: RememberedCredential): void {
    const id = `${dbName}\0${keyHash}`;
    this.#entries.delete(id);
    this.#entries.set(id, { credential, at: Date.now() });
    if (this.#entries.size > this.maxEntries) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  delete(dbName: string, keyHash: string): void {
    this.#entries.delete(`${dbName}\0${keyHash}`);
  }

  get size(): number {
    return this.#entries.size;
  }
}
