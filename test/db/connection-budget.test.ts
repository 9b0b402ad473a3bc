/**
 * One connection budget for all of an engine's databases (`connection-budget.ts`), against the
 * local PostgreSQL server: more databases than connections, the coldest idle connection given up
 * first, one first-come-first-served queue across databases, the deadline and the queue bound as
 * 503 `DatabaseBusy`, and a connection killed by the server giving its place back.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEngine, type PostgresEngineOptions } from '../../src/db/postgres-engine.js';
import { DatabaseBusy } from '../../src/errors.js';
import { TEST_DATABASE_URL } from '../support/services.js';

const prefix = `tcb_${randomBytes(4).toString('hex')}_`;
const names = Array.from({ length: 6 }, (_, i) => `${prefix}${i}`);
let admin: pg.Client;
let engine: PostgresEngine | undefined;

/** An engine of its own for one test (closed after it); its databases already exist. */
function engineWith(options: Omit<PostgresEngineOptions, 'url'>): PostgresEngine {
  engine = new PostgresEngine({ url: TEST_DATABASE_URL, ...options });
  return engine;
}

/** Our backends connected to each of `databases` now, by name. */
async function backends(databases: readonly string[]): Promise<Record<string, number>> {
  const { rows } = await admin.query<{ datname: string; n: number }>(
    `SELECT datname, count(*)::int AS n FROM pg_stat_activity WHERE datname = ANY($1) AND application_name = 'fieldforge' GROUP BY 1`,
    [databases],
  );
  return Object.fromEntries(databases.map((d) => [d, rows.find((r) => r.datname === d)?.n ?? 0]));
}

async function sleepIn(e: PostgresEngine, name: string, seconds: number): Promise<void> {
  const db = await e.open(name);
  await sql`SELECT pg_sleep(${seconds})`.execute(db.executor);
}

/** Waits until `check` holds (the server ends a closed backend a moment after the socket closes). */
async function eventually(check: () => Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  const setup = new PostgresEngine({ url: TEST_DATABASE_URL });
  for (const name of names) await setup.create(name);
  await setup.close();
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
});

afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

afterAll(async () => {
  for (const name of names) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin?.end();
});

describe('one connection budget for every database', () => {
  it('serves more databases than it has connections, never holding more than the budget', async () => {
    const e = engineWith({ maxConnections: 4, poolMax: 3 });
    for (const name of names) await e.open(name);
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const counts = await backends(names);
        most = Math.max(most, Object.values(counts).reduce((a, b) => a + b, 0));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const results = await Promise.allSettled(Array.from({ length: 48 }, (_, i) => sleepIn(e, names[i % names.length]!, 0.02)));
    sampling = false;
    await sampler;
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(e.connections.peak).toBe(4); // the engine's own count, admin pool included
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(4);
  });

  it('gives up the idle connection of the coldest database first', async () => {
    const e = engineWith({ maxConnections: 2 });
    const [a, b, c] = names as [string, string, string];
    for (const name of [a, b, c]) await e.open(name); // the admin pool's look-ups, done before
    await sleepIn(e, a, 0);
    await sleepIn(e, b, 0); // the admin connection was colder than a's: it went for b
    await eventually(async () => JSON.stringify(await backends([a, b, c])) === JSON.stringify({ [a]: 1, [b]: 1, [c]: 0 }));
    await sleepIn(e, c, 0); // a's connection is now the coldest
    await eventually(async () => JSON.stringify(await backends([a, b, c])) === JSON.stringify({ [a]: 0, [b]: 1, [c]: 1 }));
    await sleepIn(e, b, 0); // b's is still there: no new connection, nothing closed
    expect(await backends([a, b, c])).toEqual({ [a]: 0, [b]: 1, [c]: 1 });
    expect(e.connections.open).toBe(2);
  });

  it('serves waiting requests first come, first served, whatever their database', async () => {
    const e = engineWith({ maxConnections: 1, poolMax: 1 });
    const [a, b, c] = names as [string, string, string];
    // Each database used once before: a first query also starts Kysely's driver, a few more
    // turns of the event loop that would reorder the checkouts below.
    for (const name of [a, b, c]) await sleepIn(e, name, 0);
    const order: string[] = [];
    const holding = sleepIn(e, a, 0.3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const waiting = [b, a, c, a].map((name, i) => sleepIn(e, name, 0).then(() => order.push(`${i}:${name}`)));
    await Promise.all([holding, ...waiting]);
    // A pool of its own per database would have let a's waiters in first, on a's connection.
    expect(order).toEqual([`0:${b}`, `1:${a}`, `2:${c}`, `3:${a}`]);
  });

  it('answers 503 DatabaseBusy with Retry-After after the deadline, and the place is not lost', async () => {
    const e = engineWith({ maxConnections: 1, connectionWaitMs: 300 });
    const [a, b] = names as [string, string];
    await e.open(a);
    await e.open(b);
    const holding = sleepIn(e, a, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = performance.now();
    const refused = await sleepIn(e, b, 0).then(() => undefined, (err: unknown) => err);
    const waited = performance.now() - started;
    expect(refused).toBeInstanceOf(DatabaseBusy);
    const busy = refused as DatabaseBusy;
    expect(busy.status).toBe(503);
    expect(busy.headers).toEqual({ 'Retry-After': '5' });
    expect(busy.message).toMatch(/FF_PG_MAX_CONNECTIONS is 1/);
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(900);
    await holding;
    await sleepIn(e, b, 0); // the one connection serves again
    expect(e.connections).toMatchObject({ open: 1, waiting: 0 });
  });

  it('refuses at once beyond the queue bound', async () => {
    const e = engineWith({ maxConnections: 1, connectionQueueMax: 2 });
    const [a] = names as [string];
    await e.open(a);
    const holding = sleepIn(e, a, 0.4);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const queued = [sleepIn(e, a, 0), sleepIn(e, a, 0)];
    const started = performance.now();
    const refused = await sleepIn(e, a, 0).then(() => undefined, (err: unknown) => err);
    expect(performance.now() - started).toBeLessThan(100);
    expect(refused).toBeInstanceOf(DatabaseBusy);
    expect((refused as Error).message).toMatch(/already waiting for a database connection/);
    await Promise.all([holding, ...queued]);
  });

  it('gives the place of a connection the server killed back to the budget', async () => {
    const e = engineWith({ maxConnections: 1 });
    const [a, b] = names as [string, string];
    await e.open(a);
    await e.open(b);
    await sleepIn(e, a, 0);
    await admin.query(`SELECT pg_terminate_backend(pid, 1000) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'fieldforge'`, [a]);
    await eventually(async () => e.connections.open === 0);
    await sleepIn(e, b, 0);
    await sleepIn(e, a, 0);
    expect(e.connections.open).toBe(1);
  });

  it('ends a database with requests waiting for it: they are refused, the others go on', async () => {
    const e = engineWith({ maxConnections: 1 });
    const [a, b] = names as [string, string];
    await e.open(a);
    await e.open(b);
    const holding = sleepIn(e, b, 0.2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const waitingForA = sleepIn(e, a, 0).then(() => 'served', () => 'refused');
    const waitingForB = sleepIn(e, b, 0).then(() => 'served', () => 'refused');
    await e.closeDatabase(a);
    expect(await waitingForA).toBe('refused');
    await holding;
    expect(await waitingForB).toBe('served');
  });
});
