/**
 * `BENCH_ONLY=tenancy npm run bench`: many tenants on one PostgreSQL cluster (issue 29 item 1).
 *
 * A template database (core, contacts, project, sales, messaging) with an administrator's API key
 * is cloned BENCH_TENANTS (1,000) times with `CREATE DATABASE … TEMPLATE` (the engine's `clone`;
 * the key is in every clone). Two FieldForge workers (server processes sharing Redis) then serve
 * them all; every request is `POST /api/query/Contact` (20 rows, two fields) for one tenant
 * (`X-DB-NAME`). Printed, each beside its baseline of the same run:
 *
 * (a) clone time: the engine's clone (median, p99 over all tenants) and `fieldforge db clone`
 *     from the command line (3 runs, the process's start included), beside a bare
 *     `CREATE DATABASE … TEMPLATE` over `pg` (3 runs);
 * (b) the first request to a tenant neither worker has opened yet, BENCH_FIRST (100) of them one
 *     after the other, alternately to each worker: p50/p99 (target p99 ≤ 150 ms), beside the same
 *     tenants' second request;
 * (c) resident memory of each worker (after a full GC) against the number of tenants it has
 *     served, at 1, 50, 100, 200 … (each tenant asked once more after the first pass): MiB per
 *     additional tenant (target ≤ 0.3);
 * (d) load: BENCH_CLIENTS (40) loops for BENCH_SECONDS (15) each, over all tenants at random and
 *     then over 10 hot ones: requests/s, non-2xx (target 0, by status), p50/p99, and the most
 *     server connections FieldForge held meanwhile (`pg_stat_activity`, polled every 100 ms),
 *     beside `max_connections`.
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_TENANTS,
 * BENCH_FIRST, BENCH_CLIENTS, BENCH_SECONDS, BENCH_KEEP=1 (keep the databases). Not a test: it
 * prints figures and never fails CI.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { TestRedis } from '../test/support/redis-server.js';
import { BENCH_BASE_URL, createBenchDatabase } from './bench-database.js';
import { median, percentile } from './bench-measures.js';
import { memoryOf, startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';

const BASE_URL = BENCH_BASE_URL;
const TENANTS = Math.max(20, Number(process.env.BENCH_TENANTS ?? 1_000));
const FIRST = Math.min(TENANTS - 10, Math.max(10, Number(process.env.BENCH_FIRST ?? 100)));
const CLIENTS = Math.max(1, Number(process.env.BENCH_CLIENTS ?? 40));
const SECONDS = Math.max(1, Number(process.env.BENCH_SECONDS ?? 15));
const KEEP = process.env.BENCH_KEEP === '1';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const QUERY = JSON.stringify({ fields: ['name', 'email'], limit: 20, order_by: ['id ASC'] });

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (x: number, digits = 1) => x.toFixed(digits);

async function query(port: number, key: string, db: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/api/query/Contact`, {
    method: 'POST', body: QUERY, headers: { authorization: `Bearer ${key}`, 'x-db-name': db, 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t0 };
}

async function settledRss(server: ServerProcess): Promise<number> {
  for (let i = 0; i < 2; i++) {
    await fetch(`http://127.0.0.1:${server.port}/__gc`, { method: 'POST' });
    await sleep(300);
  }
  return memoryOf(server.child.pid!).rss / 1024;
}

/** The most connections FieldForge's workers hold on the cluster while `work` runs (polled every 100 ms). */
async function peakConnections<T>(admin: pg.Client, work: () => Promise<T>): Promise<{ value: T; peak: number; total: number }> {
  let peak = 0;
  let total = 0;
  let running = true;
  const poll = (async () => {
    while (running) {
      const { rows } = await admin.query<{ ours: string; all: string }>(
        "SELECT count(*) FILTER (WHERE application_name = 'fieldforge') AS ours, count(*) AS all FROM pg_stat_activity WHERE backend_type = 'client backend'",
      );
      peak = Math.max(peak, Number(rows[0]!.ours));
      total = Math.max(total, Number(rows[0]!.all));
      await sleep(100);
    }
  })();
  try {
    const value = await work();
    return { value, peak, total };
  } finally {
    running = false;
    await poll;
  }
}

async function load(ports: number[], key: string, dbs: string[], seconds: number): Promise<{ latencies: number[]; statuses: Map<number, number>; perSecond: number }> {
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    while (performance.now() < until) {
      const db = dbs[Math.floor(Math.random() * dbs.length)]!;
      let r: { status: number; ms: number };
      try {
        r = await query(ports[c % ports.length]!, key, db);
      } catch {
        r = { status: 0, ms: NaN };
      }
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 200) latencies.push(r.ms);
    }
  }));
  return { latencies, statuses, perSecond: latencies.length / ((performance.now() - t0) / 1000) };
}

async function main(): Promise<void> {
  const tag = randomBytes(3).toString('hex');
  const template = `ffbench_tenant_${tag}_tpl`;
  const tenants = Array.from({ length: TENANTS }, (_, i) => `ffbench_tenant_${tag}_${i}`);
  const engine = new PostgresEngine({ url: BASE_URL });
  const admin = new pg.Client({ connectionString: BASE_URL });
  await admin.connect();
  const started: ServerProcess[] = [];
  let redis: TestRedis | null = null;
  const made: string[] = [];
  const load0 = loadavg();
  try {
    log(`creating ${template} (contacts, project, sales)…`);
    const key = await createBenchDatabase(engine, template, ['contacts', 'project', 'sales'], 'tenancy benchmark');
    made.push(template);
    log(`cloning ${TENANTS} tenants…`);
    const cloneMs: number[] = [];
    for (const name of tenants) {
      const t0 = performance.now();
      await engine.clone(template, name);
      cloneMs.push(performance.now() - t0);
      made.push(name);
    }
    const maxConnections = Number((await admin.query<{ max_connections: string }>('SHOW max_connections')).rows[0]!.max_connections);

    // (a) beside: the command line (compiled, as people run it: built first when stale) and the bare statement, 3 runs each.
    const { isFresh } = (await import(new URL('../bin/build-stamp.js', import.meta.url).href)) as { isFresh(root: string): boolean };
    if (!isFresh(ROOT)) spawnSync(process.execPath, ['bin/build.js'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
    const cli: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < 3; i++) {
      const target = `ffbench_tenant_${tag}_cli${i}`;
      const t0 = performance.now();
      const run = spawnSync(process.execPath, ['bin/fieldforge.js', 'db', 'clone', template, target], {
        cwd: ROOT, env: { ...process.env, DATABASE_URL: BASE_URL, FF_SECRET: 'tenancy-bench' }, encoding: 'utf8',
      });
      cli.push(performance.now() - t0);
      if (run.status !== 0) throw new Error(`fieldforge db clone failed: ${run.stderr}`);
      made.push(target);
      const plain = `ffbench_tenant_${tag}_bare${i}`;
      const t1 = performance.now();
      await admin.query(`CREATE DATABASE "${plain}" TEMPLATE "${template}"`);
      bare.push(performance.now() - t1);
      made.push(plain);
    }

    redis = await TestRedis.start();
    const env = { DATABASE_URL: BASE_URL, BENCH_DB: template, REDIS_URL: redis.url, FF_REDIS_PREFIX: `fftenancy${tag}:` };
    const servers = await Promise.all([0, 1].map(() => startServerProcess('bench/fieldforge-server.ts', env, ['--expose-gc'])));
    started.push(...servers);
    const ports = servers.map((s) => s.port);
    for (const p of ports) await query(p, key, template); // warm: code paths and the template's registry

    console.log(`\nTenancy; ${availableParallelism()} CPUs, ${TENANTS.toLocaleString('en')} tenants, max_connections ${maxConnections}, load average ${load0.map((l) => fmt(l)).join(' ')} at the start.`);
    console.log(`\n(a) clone: engine.clone median ${fmt(median(cloneMs), 0)} ms, p99 ${fmt(percentile(cloneMs, 99), 0)} ms over ${TENANTS}; fieldforge db clone (process included) ${cli.map((x) => fmt(x / 1000, 2)).join(', ')} s; bare CREATE DATABASE … TEMPLATE ${bare.map((x) => fmt(x, 0)).join(', ')} ms`);

    // (b) first requests to tenants not yet open, then their second.
    const firstOf = tenants.slice(TENANTS - FIRST);
    const first: number[] = [];
    const second: number[] = [];
    for (const [i, db] of firstOf.entries()) {
      const r = await query(ports[i % 2]!, key, db);
      if (r.status !== 200) throw new Error(`first request to ${db} answered ${r.status}`);
      first.push(r.ms);
    }
    for (const [i, db] of firstOf.entries()) second.push((await query(ports[i % 2]!, key, db)).ms);
    const p99 = percentile(first, 99);
    console.log(`\n(b) first request to a tenant not yet open (${FIRST}, alternately to each worker): p50 ${fmt(percentile(first, 50))} ms, p99 ${fmt(p99)} ms, max ${fmt(Math.max(...first))} ms   second request: p50 ${fmt(percentile(second, 50))}, p99 ${fmt(percentile(second, 99))} ms   target p99 ≤ 150 ms: ${p99 <= 150 ? 'met' : 'MISSED'}`);

    // (c) memory against tenants served, worker 1 only (worker 2 idle as the control).
    const steps = [1, 50, 100, 200, 400, 800].filter((n) => n <= TENANTS - FIRST);
    const rss: { served: number; mib: number[] }[] = [];
    let served = 0;
    for (const n of steps) {
      for (; served < n; served++) await query(ports[0]!, key, tenants[served]!);
      rss.push({ served: n, mib: [await settledRss(servers[0]!), await settledRss(servers[1]!)] });
    }
    console.log(`\n(c) resident memory of worker 1 (after a full GC) against the tenants it served (worker 2, idle meanwhile, as the control)`);
    for (const r of rss) console.log(`  ${String(r.served).padStart(5)} tenants served: worker 1 ${fmt(r.mib[0]!)} MiB   worker 2 ${fmt(r.mib[1]!)} MiB`);
    if (rss.length > 1) {
      const a = rss[0]!;
      const z = rss[rss.length - 1]!;
      const slope = (z.mib[0]! - a.mib[0]!) / (z.served - a.served);
      console.log(`  ${fmt(slope, 2)} MiB per additional tenant   target ≤ 0.3: ${slope <= 0.3 ? 'met' : 'MISSED'}`);
    }

    // (d) load, over all tenants and over 10 hot ones.
    for (const [label, dbs] of [[`all ${TENANTS} tenants`, tenants], ['10 hot tenants', tenants.slice(0, 10)]] as const) {
      const { value: r, peak, total } = await peakConnections(admin, () => load(ports, key, [...dbs], SECONDS));
      const non2xx = [...r.statuses].filter(([s]) => s !== 200);
      const count = non2xx.reduce((sum, [, n]) => sum + n, 0);
      const all = [...r.statuses.values()].reduce((sum, n) => sum + n, 0);
      console.log(`\n(d) ${CLIENTS} clients for ${SECONDS} s over ${label}: ${fmt(r.perSecond, 0)} requests/s, p50 ${fmt(percentile(r.latencies, 50))} ms, p99 ${fmt(percentile(r.latencies, 99))} ms`);
      console.log(`  non-2xx: ${count} of ${all} (${fmt((100 * count) / Math.max(1, all), 2)} %)${non2xx.length ? ` — ${non2xx.map(([s, n]) => `${s || 'network'}: ${n}`).join(', ')}` : ''}   target 0: ${count === 0 ? 'met' : 'MISSED'}`);
      console.log(`  server connections: FieldForge at most ${peak}, the cluster at most ${total} of max_connections ${maxConnections}   (load average now ${fmt(loadavg()[0]!)})`);
    }
  } finally {
    for (const s of started) await stopServerProcess(s).catch(() => {});
    await redis?.stop().catch(() => {});
    if (!KEEP) {
      log(`dropping ${made.length} databases…`);
      for (const name of made) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((err: unknown) => log(`could not drop ${name}: ${String(err)}`));
    }
    await admin.end().catch(() => {});
    await engine.close().catch(() => {});
  }
}

await main();
