import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearStaleInstallFlag, INSTALL_LOCK, readPlatformState, setInstalling } from '../../src/db/platform-state.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
beforeAll(async () => { t = await testDatabase('core'); });
afterAll(async () => { await t.close(); });

describe('the install flag', () => {
  it('is cleared at start-up when the installer that set it is gone', async () => {
    const db = await t.platform.database(t.name);
    await setInstalling(db.executor, true);
    expect((await readPlatformState(db.executor)).installing).toBe(true);
    expect(await clearStaleInstallFlag(db.executor)).toBe(true);
    expect((await readPlatformState(db.executor)).installing).toBe(false);
  });

  it('is left alone while an installer holds the install lock', async () => {
    const db = await t.platform.database(t.name);
    await setInstalling(db.executor, true);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const installer = db.executor.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${INSTALL_LOCK})`.execute(trx);
      locked();
      await held;
    });
    await lockTaken;
    expect(await clearStaleInstallFlag(db.executor)).toBe(false);
    expect((await readPlatformState(db.executor)).installing).toBe(true);
    release();
    await installer;
    await setInstalling(db.executor, false);
  });
});
