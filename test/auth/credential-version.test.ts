/**
 * The credential version (`auth/credential-version.ts`): every change that could end a key's or
 * session's validity moves it, in the same transaction, whatever wrote it (plain SQL here); what
 * cannot end a validity (a new key or session, `last_used_at`, a name) leaves it, so remembered
 * credentials stay remembered.
 */
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { sql } from '../../src/db/sql-fragment.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { openSession } from '../../src/auth/sessions.js';
import { User } from '../../modules/core/models/user.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let db: SqlExecutor;
let key: { apiKeyId: number; serviceAccountId: number };
let sessionId: number;
let userId: number;
let companyId: number;

beforeAll(async () => {
  t = await testDatabase('full');
  db = (await t.platform.database(t.name)).executor;
  key = await t.run(() => createServiceAccountKey({ name: 'Versioned', groups: ['core.group_user'] }));
  const person = await t.run(() => User.create({ name: 'Versioned person', email: 'versioned@example.test' }));
  userId = person.id;
  await t.run(() => openSession(userId, { dbName: t.name, secret: t.platform.secret, sessionHours: 1 }));
  ({ rows: [{ id: sessionId }] } = await sql<{ id: number }>`SELECT id FROM auth_session WHERE user_id = ${userId}`.execute(db) as { rows: [{ id: number }] });
  ({ rows: [{ id: companyId }] } = await sql<{ id: number }>`SELECT id FROM company ORDER BY id LIMIT 1`.execute(db) as { rows: [{ id: number }] });
}, 60_000);
afterAll(async () => {
  await t?.close();
});

async function version(): Promise<number> {
  const { rows } = await sql<{ v: number }>`SELECT credential_version AS v FROM ff_state WHERE id = 1`.execute(db);
  return rows[0]!.v;
}

/** How far `statement` moves the credential version. */
async function moves(statement: () => Promise<unknown>): Promise<number> {
  const before = await version();
  await statement();
  return (await version()) - before;
}

describe('the credential version', () => {
  it('moves with every change that could end a key, an account, a session or a user', async () => {
    const changes: [string, () => Promise<unknown>][] = [
      ['key revoked', () => sql`UPDATE api_key SET revoked_at = now() WHERE id = ${key.apiKeyId}`.execute(db)],
      ['key re-dated', () => sql`UPDATE api_key SET expires_at = now() + interval '1 day' WHERE id = ${key.apiKeyId}`.execute(db)],
      ['key re-hashed', () => sql`UPDATE api_key SET key_hash = key_hash WHERE id = ${key.apiKeyId}`.execute(db)],
      ['key moved', () => sql`UPDATE api_key SET service_account_id = service_account_id WHERE id = ${key.apiKeyId}`.execute(db)],
      ['account deactivated', () => sql`UPDATE service_account SET active = false WHERE id = ${key.serviceAccountId}`.execute(db)],
      ['account given a user', () => sql`UPDATE service_account SET user_id = user_id WHERE id = ${key.serviceAccountId}`.execute(db)],
      ['account given a company', () => sql`UPDATE service_account SET company_id = ${companyId} WHERE id = ${key.serviceAccountId}`.execute(db)],
      ['session revoked', () => sql`UPDATE auth_session SET revoked_at = now() WHERE id = ${sessionId}`.execute(db)],
      ['session re-dated', () => sql`UPDATE auth_session SET expires_at = now() WHERE id = ${sessionId}`.execute(db)],
      ['session given a user', () => sql`UPDATE auth_session SET user_id = user_id WHERE id = ${sessionId}`.execute(db)],
      ['user deactivated', () => sql`UPDATE "user" SET active = false WHERE id = ${userId}`.execute(db)],
      ['user moved', () => sql`UPDATE "user" SET company_id = ${companyId} WHERE id = ${userId}`.execute(db)],
      ['session deleted', () => sql`DELETE FROM auth_session WHERE id = ${sessionId}`.execute(db)],
      ['key deleted', () => sql`DELETE FROM api_key WHERE id = ${key.apiKeyId}`.execute(db)],
    ];
    for (const [label, change] of changes) expect(await moves(change), label).toBe(1);
  });

  it('moves with the change, in its transaction: a rolled-back revocation moves nothing', async () => {
    const other = await t.run(() => createServiceAccountKey({ name: 'Rolled back', groups: ['core.group_user'] }));
    expect(await moves(() => db.transaction().execute(async (trx) => {
      await sql`UPDATE api_key SET revoked_at = now() WHERE id = ${other.apiKeyId}`.execute(trx);
      throw new Error('changed my mind');
    }).catch(() => undefined))).toBe(0);
  });

  it('stays for what cannot end a validity: new keys and sessions, last_used_at, names', async () => {
    const unchanged: [string, () => Promise<unknown>][] = [
      ['new key', () => t.run(() => createServiceAccountKey({ name: 'Another', groups: ['core.group_user'] }))],
      ['new session', () => t.run(() => openSession(userId, { dbName: t.name, secret: t.platform.secret, sessionHours: 1 }))],
      ['key used', () => sql`UPDATE api_key SET last_used_at = now()`.execute(db)],
      ['account renamed', () => sql`UPDATE service_account SET name = name || '.'`.execute(db)],
      ['user renamed', () => sql`UPDATE "user" SET name = name || '.' WHERE id = ${userId}`.execute(db)],
    ];
    for (const [label, change] of unchanged) expect(await moves(change), label).toBe(0);
  });
});
