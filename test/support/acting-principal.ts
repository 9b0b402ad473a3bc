/**
 * A service account with an API key, and model code run as it (its groups, rules and companies):
 * for tests of what one principal's compiled statements may answer for another.
 */
import { randomBytes } from 'node:crypto';
import { compileAccessPolicy } from '../../src/access/access-policy.js';
import { loadAccessProfile, type AccessProfile } from '../../src/access/access-profile.js';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { ServiceAccount } from '../../modules/core/models/service_account.js';
import type { TestDatabase } from './test-database.js';

export interface Principal { key: string; uid: number; serviceAccountId: number; apiKeyId: number }

/** A new service account in `groups`, its key and its user. */
export async function principal(t: TestDatabase, name: string, groups: string[]): Promise<Principal> {
  const made = await t.run(() => createServiceAccountKey({ name: `${name} ${randomBytes(2).toString('hex')}`, groups }));
  const uid = await t.run(async () => {
    const [sa] = await ServiceAccount.query({ id: made.serviceAccountId }).read(['user']);
    return (sa!.user as { id: number }).id;
  });
  return { key: made.key, uid, serviceAccountId: made.serviceAccountId, apiKeyId: made.apiKeyId };
}

/** Model code as `who`, in one unit of work; `fn` is given the access profile it runs under. */
export async function runAs<T>(t: TestDatabase, who: Principal, fn: (access: AccessProfile) => Promise<T>): Promise<T> {
  const db = await t.platform.database(t.name);
  const registry = await t.platform.registry(t.name);
  const access = await loadAccessProfile(db.executor, registry, { uid: who.uid, serviceAccountId: who.serviceAccountId });
  return t.run(() => fn(access), { uid: who.uid, companyId: null, companyIds: [...access.companyIds], access: compileAccessPolicy(access), su: false });
}
