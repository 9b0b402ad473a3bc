/**
 * The ceiling benchmark (issue 15): what the permission layer and the generic model API cost per
 * request, in CPU, beside a bare `node:http` + `pg` server (bench/bare-orders-server.ts) doing
 * the same SQL work with the same pool, on a generated model of 100,000 orders over 1,000 partners
 * (`BenchOrder`, module bench/modules/bench_orders), for two keys: an administrator's and a
 * clerk's, whose record rule (own or unassigned orders) both servers compile into their SQL.
 *
 * CPU per request (the server process plus the PostgreSQL backends of its pool, from /proc) is the
 * steadiest figure on a shared machine, so the targets are on it: FieldForge ÷ bare ≤ 1.7 (list),
 * 2.0 (fetch), 2.0 (create), 1.15 (count), for both keys. Also printed: req/s, p50/p99, statements
 * per request, and the FieldForge server's resident memory idle (after start and one request of
 * each shape and key, settled 2 s; target ≤ 120 MiB) and at its peak under the load (VmHWM, reset
 * after the idle reading; target ≤ 180 MiB), with the bare server's beside it.
 *
 * Environment: as run.ts (BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_CONNECTIONS,
 * BENCH_PROFILE=1, BENCH_SQL=1, BENCH_KEEP=1, BENCH_DATABASE_URL, BENCH_FF_NODE_ARGS), plus
 * BENCH_PLAIN=0 (leave out the third server, the plain program of issue 29: bare-orders-server.ts
 * with no credential check and no rule, whose clerk rows are then the administrator's; its
 * targets are issue 29's, ≤ 1.5 / 1.6 / 1.6 / 1.1 and p99 ≤ 1.5 ×), BENCH_PROFILE_DIR (keep the raw profiles), BENCH_CASES (shapes, e.g. `list,count`, or run.ts's
 * letters a–d for the same four) and BENCH_KEYS (`admin,clerk`). BENCH_BASELINE_ROOT=<another
 * checkout>: FieldForge as built there takes the bare server's place, an A/B of two versions in
 * one run (the ratios are then new ÷ old); BENCH_BASELINE_NODE_ARGS gives the baseline node flags
 * of its own (with BENCH_BASELINE_ROOT=. an A/B of two sets of flags on one build).
 */
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AutocannonRequest } from 'autocannon';
import pg from 'pg';
import { hashApiKey } from '../src/auth/api-keys.js';
import {
  CONNECTIONS, DURATION, ROUNDS, WARMUP, call, benchRun, callBoth, figuresOf, log, logStatements, measureServers, pad,
  startBaselineFieldforge, startServer, table, type Measured,
} from './api-load.js';
import { BENCH_BASE_URL, databaseUrl } from './bench-database.js';
import { formatSummary, summarizeProfiles } from './profile.js';
import { measureServeMemory, type ServeMemory } from './serve-memory.js';
import { memoryOf, resetPeakMemory, stopServerProcess } from './server-process.js';

const ORDERS = 100_000;
const PARTNERS = 1_000;
const MODULES_DIR = fileURLToPath(new URL('./modules', import.meta.url));
const IDLE_TARGET_MIB = 120;
const PEAK_TARGET_MIB = 180;
/** BENCH_PLAIN=0 leaves the plain server out (the guarded bare server alone, as issue 15 measured). */
const WITH_PLAIN = process.env.BENCH_PLAIN !== '0';

type ShapeKey = 'list' | 'fetch' | 'create' | 'count';
type KeyName = 'admin' | 'clerk';

interface Seeded {
  partnerIds: number[];
  /**
   * A random order the clerk sees too (its own and unassigned ones: every seeded id but id % 3 = 2),
   * so both keys fetch the same spread of orders.
   */
  visibleId(): number;
}

interface Shape {
  key: ShapeKey;
  title: string;
  /** FieldForge ÷ bare, node + PostgreSQL CPU per request, at most. */
  target: number;
  /** FieldForge ÷ the plain server, node + PostgreSQL CPU per request, at most (issue 29). */
  plainTarget: number;
  /** The request for autocannon (the same for both servers), under `headers`. */
  request(headers: Record<string, string>): AutocannonRequest;
  /** One concrete request, for the correctness check. */
  sample(): { path: string; body: unknown };
  /** Checks the shape of FieldForge's answer; returns a description or throws. */
  describe(ff: unknown): string;
}

interface Measurement {
  shape: Shape;
  keyName: KeyName;
  ff: Measured;
  bare: Measured;
  plain: Measured | null;
}

// ------------------------------------------------------------------------------------------------
// Setup
// ------------------------------------------------------------------------------------------------

/**
 * 1,000 partners, then 100,000 orders: states round-robin (20,000 each), dates spread over 2026,
 * one third each the clerk's, a colleague's (the administrator person) and unassigned, so the
 * clerk sees two thirds of every state. Ids are given (then the identity moves past them) so the
 * bench knows which the clerk sees.
 */
async function seed(client: pg.Client, clerkUid: number): Promise<Seeded> {
  const { rows: [admin] } = await client.query<{ uid: number; company: number }>(
    `SELECT id AS uid, company_id AS company FROM "user" WHERE identifier = 'core.user_admin'`);
  await client.query('BEGIN');
  const { rows: partners } = await client.query<{ id: number }>(`INSERT INTO contact (name, is_company, city, active, company_id,
      created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Partner ' || lpad(g::text, 4, '0'), TRUE, (ARRAY['Lyon', 'Porto', 'Ghent', 'Turin', 'Basel'])[1 + g % 5], TRUE, $2,
      now(), $1, now(), $1
    FROM generate_series(1, ${PARTNERS}) g RETURNING id`, [admin!.uid, admin!.company]);
  const partnerIds = partners.map((r) => r.id).sort((a, b) => a - b);
  await client.query(`INSERT INTO bench_order (id, name, partner_id, state, date_order, amount_total, salesperson_id,
      created_date, created_by_id, updated_date, updated_by_id)
    SELECT g, 'BO' || lpad(g::text, 6, '0'), ($1::int[])[1 + (g * 31) % ${PARTNERS}],
      (ARRAY['draft', 'sent', 'sale', 'done', 'cancel'])[1 + g % 5], DATE '2026-01-01' + (g * 7919) % 365,
      ((g * 7919) % 100000) / 100.0, CASE g % 3 WHEN 1 THEN $2::int WHEN 2 THEN $3::int END,
      now(), $3, now(), $3
    FROM generate_series(1, ${ORDERS}) g`, [partnerIds, clerkUid, admin!.uid]);
  await client.query(`SELECT setval(pg_get_serial_sequence('bench_order', 'id'), ${ORDERS})`);
  await client.query('COMMIT');
  await client.query('ANALYZE');
  return {
    partnerIds,
    visibleId() {
      const id = 1 + Math.floor(Math.random() * ORDERS);
      return id % 3 === 2 ? id - 1 : id;
    },
  };
}

// ------------------------------------------------------------------------------------------------
// Shapes
// ------------------------------------------------------------------------------------------------

function shapes(seeded: Seeded): Shape[] {
  const post = (path: string, body: unknown, headers: Record<string, string>): AutocannonRequest =>
    ({ method: 'POST', path, headers, body: JSON.stringify(body) });
  const listBody = {
    filter_str: "Q(state='sale')", order_by: ['date_order DESC'], limit: 50,
    fields: ['name', 'date_order', 'state', 'amount_total', 'partner.name'],
  };
  const fetchBody = { fields: ['name', 'state', 'date_order', 'amount_total', 'partner.name'] };
  const createBody = { name: 'Benchmark order', partner: seeded.partnerIds[0], date_order: '2026-06-30', amount_total: 120.5 };
  const countBody = { filter_str: "Q(state='sent')", counter: true, limit: 1, fields: ['id'], order_by: ['id ASC'] };
  const fetchPath = () => `/api/fetch/BenchOrder/${seeded.visibleId()}`;
  return [
    {
      key: 'list', target: 1.7, plainTarget: 1.5,
      title: 'list 50 orders of a state by date, with partner.name',
      request: (h) => post('/api/query/BenchOrder', listBody, h),
      sample: () => ({ path: '/api/query/BenchOrder', body: listBody }),
      describe(ff) {
        if (!Array.isArray(ff) || ff.length !== 50) throw new Error(`list: expected 50 orders, got ${JSON.stringify(ff).slice(0, 200)}`);
        return `50 orders, first ${(ff[0] as { name: string }).name} of ${(ff[0] as { partner: { name: string } }).partner.name}`;
      },
    },
    {
      key: 'fetch', target: 2.0, plainTarget: 1.6,
      title: 'fetch one order by id with partner.name (random order)',
      request: (h) => ({ ...post(fetchPath(), fetchBody, h), setupRequest: (req) => ({ ...req, path: fetchPath() }) }),
      sample: () => ({ path: fetchPath(), body: fetchBody }),
      describe(ff) {
        const r = ff as { name?: unknown; partner?: { name?: unknown } };
        if (typeof r.name !== 'string' || typeof r.partner?.name !== 'string') throw new Error(`fetch: got ${JSON.stringify(ff).slice(0, 200)}`);
        return `${r.name} of ${r.partner.name}`;
      },
    },
    {
      key: 'create', target: 2.0, plainTarget: 1.6,
      title: 'create one order (name, partner, date, total)',
      request: (h) => post('/api/create/BenchOrder', createBody, h),
      sample: () => ({ path: '/api/create/BenchOrder', body: createBody }),
      describe(ff) {
        const r = ff as { id?: unknown; name?: unknown };
        if (typeof r.id !== 'number' || r.name !== createBody.name) throw new Error(`create: got ${JSON.stringify(ff).slice(0, 200)}`);
        return `created ${r.id}`;
      },
    },
    {
      key: 'count', target: 1.15, plainTarget: 1.1,
      title: 'counter of the orders of a state (count + 1-row page)',
      request: (h) => post('/api/query/BenchOrder', countBody, h),
      sample: () => ({ path: '/api/query/BenchOrder', body: countBody }),
      describe(ff) {
        const n = (ff as { count?: unknown }).count;
        if (typeof n !== 'number' || n <= 0) throw new Error(`count: expected a count, got ${JSON.stringify(ff).slice(0, 200)}`);
        return `count ${n}`;
      },
    },
  ];
}

/**
 * The two answers as sent, compared as JSON text (key order included); a create's ids differ, so
 * those are blanked first.
 */
function assertSame(shape: Shape, keyName: KeyName, ff: unknown, bare: unknown): void {
  const text = (v: unknown) => JSON.stringify(shape.key === 'create' ? { ...(v as object), id: 0 } : v);
  if (text(ff) !== text(bare)) {
    throw new Error(`${shape.key}/${keyName}: the answers differ\n  fieldforge: ${text(ff).slice(0, 800)}\n  bare:       ${text(bare).slice(0, 800)}`);
  }
}

// ------------------------------------------------------------------------------------------------
// Output
// ------------------------------------------------------------------------------------------------

const mib = (kib: number) => kib / 1024;

interface Memory {
  idle: { ff: number; bare: number };
  /** FieldForge's own account of it at the idle reading (bytes). */
  ffUsage: NodeJS.MemoryUsage;
  /** sinceIdle false: the peak could not be reset after the idle reading, so it covers start-up too. */
  peak: { ff: number; bare: number; sinceIdle: boolean };
  /** The real `fieldforge serve` (serve-memory.ts); null when BENCH_SERVE_MEMORY=0. */
  serve: ServeMemory | null;
}

function printResults(runs: Measurement[], memory: Memory, dbName: string, elapsed: number, loadBefore: number): void {
  const out: string[] = [];
  out.push('');
  out.push(`Ceiling: FieldForge vs bare node:http + pg, ${ORDERS.toLocaleString('en')} orders over ${PARTNERS.toLocaleString('en')} partners (BenchOrder),`);
  out.push(`an administrator's key and a clerk's (record rule: own or unassigned orders), ${CONNECTIONS} connections, pool of 10 on both;`);
  out.push(`per shape, key and server ${DURATION} s of load in ${ROUNDS} interleaved rounds (A B B A…), after a ${WARMUP} s warm-up each.`);
  out.push(`Database ${dbName}; ${availableParallelism()} CPU cores shared by PostgreSQL, both servers and the load generator (and anything else running).`);
  out.push('CPU µs/req: the server process (node), the PostgreSQL backends of its pool (PG), both (total), from /proc; SQL/req as each server counts.');
  out.push('');
  const rows: string[][] = [];
  const baselineLabel = process.env.BENCH_BASELINE_ROOT ? 'FF baseline' : 'bare http+pg';
  for (const { shape, keyName, ff, bare, plain } of runs) {
    const measured = [['FieldForge', ff], [baselineLabel, bare], ...(plain ? [['plain http+pg', plain] as const] : [])] as const;
    for (const [label, m] of measured) {
      const f = figuresOf(m);
      rows.push([
        shape.key, keyName, label, f.rate.toFixed(0), f.p50.toFixed(1), f.p99.toFixed(1), f.nodeUs.toFixed(0),
        f.pgUs === null ? 'n/a' : f.pgUs.toFixed(0), f.totalUs.toFixed(0), f.sqlPerRequest.toFixed(2), String(m.errors),
      ]);
    }
  }
  out.push(...table(
    ['shape', 'key', 'server', 'req/s', 'p50 ms', 'p99 ms', 'node µs/req', 'PG µs/req', 'total µs/req', 'SQL/req', 'errors'],
    [6, 5, 13, 7, 7, 7, 11, 9, 12, 7, 6], rows, 3,
  ));
  const ratios = (label: string, pick: (r: Measurement) => Measured | null, target: (s: Shape) => number, p99Target: number | null) => {
    out.push('');
    out.push(`FieldForge ÷ ${label}, node+PG CPU per request, against the target (also: node alone, req/s ${label} ÷ FieldForge, p99 FieldForge ÷ ${label}):`);
    for (const run of runs) {
      const other = pick(run);
      if (!other) continue;
      const [f, b] = [figuresOf(run.ff), figuresOf(other)];
      const ratio = f.totalUs / b.totalUs;
      const p99 = f.p99 / b.p99;
      out.push(`  ${pad(run.shape.key, 6)} ${pad(run.keyName, 5)} ${pad(run.shape.title, 58)} ${ratio.toFixed(2)}  target ≤ ${target(run.shape).toFixed(2)}  ${pad(ratio <= target(run.shape) ? 'met' : 'MISSED', 6)}`
        + `  node ${(f.nodeUs / b.nodeUs).toFixed(2)}  req/s ${(b.rate / f.rate).toFixed(2)}  p99 ${p99.toFixed(2)}`
        + (p99Target === null ? '' : ` (≤ ${p99Target.toFixed(1)} ${p99 <= p99Target ? 'met' : 'MISSED'})`));
    }
  };
  ratios(process.env.BENCH_BASELINE_ROOT ? 'FF baseline' : 'bare', (r) => r.bare, (sh) => sh.target, null);
  ratios('plain', (r) => r.plain, (sh) => sh.plainTarget, 1.5);
  out.push('  (bare: the credential check and the clerk\'s rule in hand-written SQL, issue 15; plain: neither, issue 29)');
  out.push('');
  const verdict = (v: number, target: number) => `target ≤ ${target} MiB  ${v <= target ? 'met' : 'MISSED'}`;
  out.push(`Memory (RSS), the bench's FieldForge server (compiled platform, bench routes, tsx loader for the bench script): idle ${mib(memory.idle.ff).toFixed(1)} MiB (after start + one request of each shape and key, settled 2 s; the targets are the real serve's, below)`);
  const u = memory.ffUsage;
  out.push(`  of which V8 heap ${(u.heapTotal / 2 ** 20).toFixed(1)} MiB (${(u.heapUsed / 2 ** 20).toFixed(1)} MiB used), external ${(u.external / 2 ** 20).toFixed(1)} MiB (array buffers ${(u.arrayBuffers / 2 ** 20).toFixed(1)} MiB); the rest is outside V8's heap (the runtime, native allocations)`);
  out.push(`  peak under the load ${mib(memory.peak.ff).toFixed(1)} MiB (VmHWM${memory.peak.sinceIdle ? ', reset after the idle reading' : ', since start: it could not be reset'})`);
  out.push(`Memory (RSS), bare server: idle ${mib(memory.idle.bare).toFixed(1)} MiB, peak under the load ${mib(memory.peak.bare).toFixed(1)} MiB`);
  const serve = memory.serve;
  if (serve) {
    out.push(`Memory (RSS), \`fieldforge serve\` (${serve.compiled ? 'compiled' : 'from its sources through tsx: `npm run build` failed or is stale'}), one open database:`);
    out.push(`  idle ${mib(serve.idle).toFixed(1)} MiB, 30 s after one request of each shape and key  ${verdict(mib(serve.idle), IDLE_TARGET_MIB)}`);
    if (serve.peakUnderLoad !== null) out.push(`  peak under the load ${mib(serve.peakUnderLoad).toFixed(1)} MiB (each shape and key 4 s in turn, ${serve.requests.toLocaleString('en')} requests)  ${verdict(mib(serve.peakUnderLoad), PEAK_TARGET_MIB)}`);
  }
  out.push('');
  out.push(`whole run ${elapsed.toFixed(0)} s; 1-minute load average ${loadBefore.toFixed(1)} before measuring, ${loadavg()[0]!.toFixed(1)} after`);
  console.log(out.join('\n'));
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

const listOf = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const started = Date.now();
  const run = benchRun();
  const { dbName } = run;

  try {
    const { client, accounts: keys } = await run.open(['contacts', 'bench_orders'], [
      { name: 'ceiling admin', groups: ['core.group_admin', 'core.group_user'] },
      { name: 'ceiling clerk', groups: ['bench_orders.group_order_clerk'] },
    ], [MODULES_DIR]);

    const t0 = Date.now();
    log(`seeding ${PARTNERS} partners, ${ORDERS} orders…`);
    const seeded = await seed(client, keys[1]!.userId);
    log(`  ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const ff = await startServer('fieldforge', { DATABASE_URL: BENCH_BASE_URL, BENCH_DB: dbName, FF_DB_POOL_MAX: '10', FF_ADDONS_PATH: MODULES_DIR });
    run.servers.push(ff);
    const bareKeys = keys.map((k, i) => ({ hash: hashApiKey(k.key), uid: k.userId, companies: k.companies, restricted: i === 1 }));
    const baselineRoot = process.env.BENCH_BASELINE_ROOT;
    const bareEnv = { BENCH_DB_URL: databaseUrl(dbName), BENCH_KEYS: JSON.stringify(bareKeys) };
    const bare = baselineRoot
      ? await startBaselineFieldforge(baselineRoot, { DATABASE_URL: BENCH_BASE_URL, BENCH_DB: dbName, FF_DB_POOL_MAX: '10', FF_ADDONS_PATH: MODULES_DIR })
      : await startServer('bare', bareEnv, 'bench/bare-orders-server.ts');
    run.servers.push(bare);
    // The plain program: no credential check, no rule (bare-orders-server.ts with BENCH_BARE_PLAIN=1).
    const plain = WITH_PLAIN
      ? await startServer('bare', { ...bareEnv, BENCH_BARE_PLAIN: '1' }, 'bench/bare-orders-server.ts', { appName: 'ffbench-plain', label: 'plain http+pg' })
      : null;
    if (plain) run.servers.push(plain);

    const headersOf = (i: number) => ({ authorization: `Bearer ${keys[i]!.key}`, 'x-db-name': dbName, 'content-type': 'application/json' });
    const onlyShapes = listOf(process.env.BENCH_CASES);
    const onlyKeys = listOf(process.env.BENCH_KEYS);
    // run.ts's case letters name the same shapes (one BENCH_CASES for both under `npm run bench`).
    const selectedShapes = shapes(seeded).filter((s, i) => !onlyShapes.length || onlyShapes.includes(s.key) || onlyShapes.includes('abcd'[i]!));
    const selectedKeys = (['admin', 'clerk'] as const)
      .map((name, i) => ({ name, headers: headersOf(i) }))
      .filter((k) => !onlyKeys.length || onlyKeys.includes(k.name));

    // Every shape under both keys (not only the selected ones): the idle memory reading follows
    // one request of each.
    log('checking answers…');
    for (const shape of shapes(seeded)) {
      for (const [i, keyName] of (['admin', 'clerk'] as const).entries()) {
        const { path, body } = shape.sample();
        const answers = await callBoth(ff, bare, `${shape.key}/${keyName}`, path, headersOf(i), body);
        logStatements(answers.statements);
        assertSame(shape, keyName, answers.ff, answers.bare);
        // The plain server applies no rule: its clerk sees the administrator's rows.
        if (plain && keyName === 'admin') {
          const answer = await call(plain, 'POST', path, headersOf(i), body);
          if (answer.status !== 200) throw new Error(`${shape.key}/${keyName}: the plain server answered ${answer.status}`);
          if (shape.key !== 'fetch') assertSame(shape, keyName, answers.ff, answer.json); // fetch: another random order
        }
        log(`  ${shape.key}/${keyName} ok, identical on ${plain && keyName === 'admin' ? 'all three' : 'both'}: ${shape.describe(answers.ff)}`);
      }
    }
    // The rule at work: an order of the colleague is hidden from the clerk (404 on both).
    const hiddenPath = '/api/fetch/BenchOrder/2';
    const hidden = await Promise.all([ff, bare].map(async (s) =>
      (await fetch(`http://127.0.0.1:${s.port}${hiddenPath}`, { method: 'POST', headers: headersOf(1), body: '{}' })).status));
    if (hidden.some((status) => status !== 404)) throw new Error(`the clerk fetched a colleague's order: ${hidden.join(', ')}`);
    log("  a colleague's order is hidden from the clerk: 404 on both");

    await settle(2_000);
    const idle = { ff: memoryOf(ff.child.pid!).rss, bare: memoryOf(bare.child.pid!).rss };
    const ffUsage = (await call(ff, 'GET', '/__memory')).json as NodeJS.MemoryUsage;
    const sinceIdle = resetPeakMemory(ff.child.pid!) && resetPeakMemory(bare.child.pid!);

    const loadBefore = loadavg()[0]!;
    const runs: Measurement[] = [];
    for (const shape of selectedShapes) {
      for (const { name, headers } of selectedKeys) {
        log(`measuring ${shape.key}/${name}: ${shape.title}…`);
        const [ffM, bareM, plainM] = await measureServers(shape.request(headers), plain ? [ff, bare, plain] : [ff, bare], client, dbName);
        const m = { ff: ffM!, bare: bareM!, plain: plainM ?? null };
        runs.push({ shape, keyName: name, ...m });
        // The creates add ~100,000 orders: vacuumed and analysed now, the counter after them is not
        // measured against autovacuum's own pass over them (it read 3,000–8,500 µs of PostgreSQL
        // per request from run to run without this).
        if (shape.key === 'create' && name === selectedKeys.at(-1)!.name) await client.query('VACUUM ANALYZE bench_order');
        if (m.ff.profiles.length) {
          log(`  FieldForge CPU profile of ${shape.key}/${name}, ${m.ff.served} requests:`);
          log(formatSummary(summarizeProfiles(m.ff.profiles, 25), m.ff.served));
          // BENCH_PROFILE_DIR: the raw profiles too, for Chrome DevTools or a flame graph.
          const dir = process.env.BENCH_PROFILE_DIR;
          if (dir) {
            m.ff.profiles.forEach((p, i) => writeFileSync(join(dir, `${shape.key}-${name}-${i}.cpuprofile`), JSON.stringify(p)));
            log(`  raw profiles in ${dir}/${shape.key}-${name}-*.cpuprofile`);
          }
        }
      }
    }
    const peak = { ff: memoryOf(ff.child.pid!).hwm, bare: memoryOf(bare.child.pid!).hwm, sinceIdle };
    // The targets are for FieldForge as people run it: the real `serve`, compiled (serve-memory.ts).
    let serve: ServeMemory | null = null;
    if (process.env.BENCH_SERVE_MEMORY !== '0') {
      for (const s of run.servers.splice(0)) await stopServerProcess(s);
      log('memory of `fieldforge serve`: one request of each shape and key, idle 30 s, then the load…');
      const eachShapeAndKey = <T>(f: (shape: Shape, headers: Record<string, string>) => T) =>
        shapes(seeded).flatMap((shape) => [0, 1].map((i) => f(shape, headersOf(i))));
      serve = await measureServeMemory({
        env: {
          DATABASE_URL: BENCH_BASE_URL, FF_DB_POOL_MAX: '10', FF_ADDONS_PATH: MODULES_DIR,
          // V8 flags to compare, e.g. `--max-semi-space-size=2` (the young generation's size).
          ...(process.env.BENCH_SERVE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVE_NODE_OPTIONS } : {}),
        },
        warm: eachShapeAndKey((shape, headers) => {
          const { path, body } = shape.sample();
          return { method: 'POST' as const, path, headers, body: JSON.stringify(body) };
        }),
        load: eachShapeAndKey((shape, headers) => shape.request(headers)),
      });
    }
    printResults(runs, { idle, ffUsage, peak, serve }, dbName, (Date.now() - started) / 1000, loadBefore);
  } finally {
    await run.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : err);
  process.exitCode = 1;
});
