/**
 * Installs and upgrades while the database serves traffic (issue 10, item 4): API-key requests —
 * remembered keys (the request guard in the first statement) and keys resolved in full (the look-up
 * that stamps `api_key.last_used_at`) — reading and writing at ~20 requests a second, while
 * `sales` is upgraded ten times (once through the real command line, in its own process) and a
 * module whose new version changes the schema of a table under traffic is upgraded (through the
 * command line too). Every upgrade must succeed and every request must answer 200 or 503 with
 * `Retry-After: 5`, never 500. Before the install window, the command-line upgrades failed with
 * `deadlock detected` (`DROP TRIGGER … ON "api_key"` against the credential check's `UPDATE api_key`)
 * in 8 of 10 tries under this traffic.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { sql } from '../../src/db/sql-fragment.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceAccountKey } from '../../src/auth/api-keys.js';
import { buildApp } from '../../src/http/app.js';
import { Contact } from '../../modules/contacts/models/contact.js';
import { ApiTraffic, type TrafficRequest } from '../support/api-traffic.js';
import { runCli } from '../support/cli.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
const V1 = join(FIXTURES, 'addons-upgrade-v1');
const V2 = join(FIXTURES, 'addons-upgrade-v2');

let t: TestDatabase;
let kdb: SqlExecutor;
/** Two workers over one database, each remembering keys on its own. */
let workers: FastifyInstance[];
let keys: string[] = [];
let contactIds: number[] = [];
/** Rows of `mod_up_thing` (the table whose schema the second test changes), once it exists. */
let thingIds: number[] = [];

async function newKeys(n: number): Promise<string[]> {
  return t.run(async () => {
    const made: string[] = [];
    for (let i = 0; i < n; i++) {
      made.push((await createServiceAccountKey({ name: `load ${randomBytes(3).toString('hex')}`, groups: ['core.group_admin', 'core.group_user'] })).key);
    }
    return made;
  });
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

/** Reads and writes of contacts, sale orders and (once installed) things, as a busy front end sends them. */
function businessRequest(): TrafficRequest {
  const id = pick(contactIds);
  if (thingIds.length && Math.random() < 0.4) {
    const thing = pick(thingIds);
    return pick<TrafficRequest>([
      { method: 'POST', url: '/api/query/ModUpThing', body: { fields: ['name', 'size'], limit: 20 } },
      { method: 'POST', url: `/api/fetch/ModUpThing/${thing}`, body: { fields: ['name'] } },
      { method: 'PUT', url: `/api/update/ModUpThing/${thing}`, body: { size: Math.floor(Math.random() * 1000) } },
    ]);
  }
  return pick<TrafficRequest>([
    { method: 'POST', url: '/api/query/Contact', body: { fields: ['name', 'parent.name'], limit: 20 } },
    { method: 'POST', url: `/api/fetch/Contact/${id}`, body: { fields: ['name', 'email'] } },
    { method: 'POST', url: '/api/create/Contact', body: { name: `Load ${randomBytes(3).toString('hex')}` } },
    { method: 'PUT', url: `/api/update/Contact/${id}`, body: { name: `Renamed ${randomBytes(3).toString('hex')}` } },
    { method: 'POST', url: '/api/query/SaleOrder', body: { fields: ['name', 'customer.name', 'amount_total'], limit: 10 } },
    { method: 'POST', url: '/api/create/SaleOrder', body: { customer: id } },
  ]);
}

/**
 * Keeps every key's `last_used_at` old enough for the full look-up to stamp it again, so each
 * request that is not served from a worker's memory runs `UPDATE api_key SET last_used_at` — the
 * statement the deadlock of the issue was reported against.
 */
function keepKeysStale(): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await sql`UPDATE api_key SET last_used_at = NULL WHERE last_used_at IS NOT NULL`.execute(kdb).catch(() => {});
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

function traffic(next: () => TrafficRequest = businessRequest): ApiTraffic {
  return new ApiTraffic({ workers, database: t.name, keys: () => keys, next, rate: 20 });
}

beforeAll(async () => {
  t = await testDatabase('full', [V1]);
  kdb = (await t.platform.database(t.name)).executor;
  await t.platform.install(t.name, { init: ['sales'] });
  workers = [await buildApp(t.platform, { dev: false }), await buildApp(t.platform, { dev: false })];
  keys = await newKeys(8);
  contactIds = await t.run(async () => {
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) ids.push((await Contact.create({ name: `Customer ${i}` })).id);
    return ids;
  });
}, 120_000);
afterAll(async () => {
  for (const w of workers ?? []) await w.close();
  await t?.close();
});

describe('upgrades under traffic', () => {
  it('ten upgrades of sales (one through the command line) all succeed; requests answer 200 or 503 with Retry-After: 5', async () => {
    const load = traffic();
    const stopStale = keepKeysStale();
    load.start();
    const outcomes: { ok: boolean; error?: string; ms: number }[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        // Keys no worker has seen yet join the traffic before each upgrade.
        keys = [...keys, ...(await newKeys(2))];
        await new Promise((r) => setTimeout(r, 300));
        const started = Date.now();
        try {
          if (i === 4) {
            const run = await runCli(['-db', t.name, '--update', 'sales'], { FF_ADDONS_PATH: V1 });
            if (run.code !== 0) throw new Error(`exit ${run.code}: ${run.stderr.slice(-2000)}`);
            expect(run.stdout).toContain('upgraded [sales]');
          } else {
            const result = await t.platform.install(t.name, { update: ['sales'] });
            expect(result.updated).toEqual(['sales']);
          }
          outcomes.push({ ok: true, ms: Date.now() - started });
        } catch (err) {
          outcomes.push({ ok: false, error: (err as Error).message.slice(0, 300), ms: Date.now() - started });
        }
      }
    } finally {
      await load.stop();
      await stopStale();
    }
    const failed = outcomes.filter((o) => !o.ok);
    console.info(`upgrades: ${outcomes.map((o) => `${o.ok ? 'ok' : 'FAILED'} ${o.ms} ms`).join(', ')}; `
      + `answers: ${load.answers.length}, 200: ${load.count(200)}, 503: ${load.count(503)}, other: ${load.unexpected().length}`);
    expect(failed, JSON.stringify(failed, null, 1)).toEqual([]);
    expect(load.unexpected().map((a) => `${a.request.method} ${a.request.url} → ${a.status} ${a.body.slice(0, 200)}`)).toEqual([]);
    // The traffic really ran into the upgrades, and was served between them.
    expect(load.count(503)).toBeGreaterThan(0);
    expect(load.count(200)).toBeGreaterThan(load.count(503));
  }, 90_000);

  it('installs a module, then upgrades it to a version that alters a table under traffic (columns, index, key, new table)', async () => {
    const load = traffic();
    const stopStale = keepKeysStale();
    load.start();
    try {
      // Installing under traffic: new tables, new rights (which move the security version).
      await t.platform.install(t.name, { init: ['mod_up'] });
      const created = await t.api('POST', '/api/create/ModUpThing', { name: 'Under traffic' });
      expect(created.statusCode, created.body).toBe(200);
      thingIds = [(created.json() as { id: number }).id, ...(await sql<{ id: number }>`SELECT id FROM mod_up_thing`.execute(kdb)).rows.map((r) => r.id)];
      await new Promise((r) => setTimeout(r, 1000)); // traffic on the table before the upgrade alters it
      // Version 2 adds columns (one required, filled with its default), indexes, a key to a new table.
      // Through the command line, as an operator upgrades: another process, its own pool.
      const run = await runCli(['-db', t.name, '--update', 'mod_up'], { FF_ADDONS_PATH: V2 });
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      expect(run.stdout).toContain('upgraded [mod_up]');
      await new Promise((r) => setTimeout(r, 1000)); // and served after it
    } finally {
      await load.stop();
      await stopStale();
    }
    const { rows } = await sql<{ column_name: string }>`
      SELECT column_name FROM information_schema.columns WHERE table_name = 'mod_up_thing'`.execute(kdb);
    expect(rows.map((r) => r.column_name)).toEqual(expect.arrayContaining(['label', 'weight', 'kind_id']));
    console.info(`schema upgrade: answers: ${load.answers.length}, 200: ${load.count(200)}, 503: ${load.count(503)}, other: ${load.unexpected().length}`);
    expect(load.unexpected().map((a) => `${a.request.method} ${a.request.url} → ${a.status} ${a.body.slice(0, 200)}`)).toEqual([]);
    // The altered table was read and written by the traffic around the upgrade.
    expect(load.answers.filter((a) => a.request.url.includes('/ModUpThing') && a.request.method === 'PUT' && a.status === 200).length).toBeGreaterThan(0);
  }, 60_000);
});
