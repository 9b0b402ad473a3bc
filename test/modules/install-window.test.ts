/**
 * The install window (`src/modules/install-window.ts`): an install raises the flag, lets the units
 * of work already running finish before its own transaction begins, and when a lock it needs is
 * held by someone else it gives up after its short lock timeout and tries again — so it succeeds
 * in the end without holding the requests queued behind its wait for longer than that timeout.
 */
import { performance } from 'node:perf_hooks';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { sql } from '../../src/db/sql-fragment.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPlatformState } from '../../src/db/platform-state.js';
import type { TenantDatabase } from '../../src/db/engine.js';
import { INSTALL_LOCK_TIMEOUT_MS } from '../../src/modules/install-window.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

let t: TestDatabase;
let database: TenantDatabase;
let kdb: SqlExecutor;

beforeAll(async () => {
  t = await testDatabase('full');
  database = await t.platform.database(t.name);
  kdb = database.executor;
  await t.platform.install(t.name, { init: ['sales'] });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The statements the database runs from now on, in order of completion; `off()` stops recording. */
function record(): { statements: string[]; off: () => void } {
  const statements: string[] = [];
  const off = database.onStatement((s) => statements.push(s.replace(/\s+/g, ' ').trim()));
  return { statements, off };
}

describe('the install window', () => {
  it('lets a unit of work in flight when the flag went up finish before its own transaction begins', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let inside!: () => void;
    const started = new Promise<void>((r) => (inside = r));
    const inFlight = t.run(async () => {
      await Contact.create({ name: 'In flight during an upgrade' });
      inside();
      await released;
    });
    await started;
    const { statements, off } = record();
    try {
      const install = t.platform.install(t.name, { update: ['sales'] });
      await sleep(400);
      // The flag is up, the unit of work still open: the install waits for it.
      expect((await readPlatformState(kdb)).installing).toBe(true);
      release();
      await inFlight;
      const result = await install;
      expect(result.updated).toEqual(['sales']);
    } finally {
      off();
    }
    const commit = statements.indexOf('commit');
    const begin = statements.findIndex((s) => /^begin/i.test(s));
    expect(commit).toBeGreaterThanOrEqual(0);
    expect(begin, statements.slice(0, 12).join('\n')).toBeGreaterThan(commit);
    expect((await readPlatformState(kdb)).installing).toBe(false);
  });

  it('gives up a lock it cannot get within its lock timeout and tries again, never holding writers up longer meanwhile', async () => {
    // The upgrade will need SHARE ROW EXCLUSIVE on sale_order to put the index back.
    await sql`DROP INDEX sale_order_date_order_idx`.execute(kdb);
    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/${t.name}`;
    const blocker = new pg.Client({ connectionString: url.href });
    await blocker.connect();
    const HOLD_MS = 2500;
    let blocking: Promise<unknown> | null = null;
    // A writer on sale_order that starts just after the flag went up (so the install does not
    // wait for it as work in flight) and keeps its transaction open for HOLD_MS.
    const { statements, off } = record();
    const offHook = database.onStatement((s) => {
      if (blocking || !s.includes('clock_timestamp()::text AS since')) return;
      blocking = blocker.query('BEGIN; LOCK TABLE sale_order IN ROW EXCLUSIVE MODE')
        .then(() => sleep(HOLD_MS))
        .then(() => blocker.query('COMMIT'));
    });
    // Meanwhile another writer on sale_order, every 50 ms: how long does each wait?
    let probing = true;
    const waits: number[] = [];
    const probe = (async () => {
      while (probing) {
        const at = performance.now();
        await sql`UPDATE sale_order SET note = note WHERE false`.execute(kdb);
        waits.push(performance.now() - at);
        await sleep(50);
      }
    })();
    let result;
    const startedAt = performance.now();
    try {
      result = await t.platform.install(t.name, { update: ['sales'] });
    } finally {
      off();
      offHook();
      probing = false;
      await probe;
      await blocking;
      await blocker.end();
    }
    console.info(`blocked upgrade: ${Math.round(performance.now() - startedAt)} ms, ${statements.filter((s) => /^begin/i.test(s)).length} attempts; `
      + `writer waits: max ${Math.round(Math.max(...waits))} ms over ${waits.length}`);
    expect(result.updated).toEqual(['sales']);
    // It could only finish once the writer committed, after more than one attempt.
    expect(performance.now() - startedAt).toBeGreaterThan(HOLD_MS - 200);
    expect(statements.filter((s) => /^begin/i.test(s)).length).toBeGreaterThan(1);
    expect(statements.filter((s) => s.startsWith('LOCK TABLE "sale_order"')).length).toBeGreaterThan(1);
    expect((await sql<{ ok: boolean }>`SELECT to_regclass('sale_order_date_order_idx') IS NOT NULL AS ok`.execute(kdb)).rows[0]!.ok).toBe(true);
    // Queued behind the install's lock request, a writer waited at most about its lock timeout.
    expect(waits.length).toBeGreaterThan(10);
    expect(Math.max(...waits)).toBeLessThan(INSTALL_LOCK_TIMEOUT_MS + 700);
    expect((await readPlatformState(kdb)).installing).toBe(false);
  });
});
