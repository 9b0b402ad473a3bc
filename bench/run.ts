/**
 * `npm run bench`: FieldForge's model API against a bare `node:http` + `pg` server doing the same
 * work (bench/bare-server.ts), on PostgreSQL with 100,000 tasks over 1,000 contacts, with an API
 * key and 10 concurrent connections. Not a test: it prints figures and never fails CI.
 *
 * 1. Creates a fresh database `ffbench_<random>` with core + contacts + project and an admin API
 *    key, seeds it with bulk SQL (setup, not measured) and ANALYZEs it.
 * 2. Starts each server as a child process (so the CPU time measured is the server's alone, not
 *    the load generator's), checks that both answer every case the same way, then for each case
 *    runs autocannon against each server: a warm-up, then measured runs interleaved A B B A…
 *    (other work on the machine then weighs on both servers alike).
 * 3. Prints req/s, p50/p99 latency, server CPU per request (the Node process, and the PostgreSQL
 *    backends serving it, read from /proc), SQL statements per request, and FieldForge's req/s as
 *    a ratio of the bare server's against the target.
 * 4. Drops the database (also on error or Ctrl-C).
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_DURATION (measured seconds per case and server, default 8), BENCH_ROUNDS (in how many
 * interleaved runs, default 4), BENCH_WARMUP (seconds, default 1),
 * BENCH_CONNECTIONS (default 10), BENCH_CASES (e.g. `a,d`), BENCH_PROFILE=1 (CPU-profile the
 * FieldForge server during each measured run and print where its time goes), BENCH_SQL=1 (print
 * the statements FieldForge runs for one request of each case), BENCH_KEEP=1 (keep the database);
 * BENCH_BARE_AUTH=db and BENCH_BARE_PREPARED=0 change the bare server (see bare-server.ts).
 */
import { execSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import autocannon, { type AutocannonInstance, type AutocannonRequest } from 'autocannon';
import pg from 'pg';
import { createServiceAccountKey, hashApiKey } from '../src/auth/api-keys.js';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { createDatabase } from '../src/platform/database-lifecycle.js';
import { Platform } from '../src/platform/platform.js';
import { formatSummary, summarizeProfiles, type CpuProfile } from './profile.js';
import { BENCH_BASE_URL, databaseUrl } from './bench-database.js';
import { startServerProcess, stopServerProcess } from './server-process.js';

const BASE_URL = BENCH_BASE_URL;
const DURATION = Number(process.env.BENCH_DURATION ?? 8);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 4));
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PROFILE = process.env.BENCH_PROFILE === '1';
const SHOW_SQL = process.env.BENCH_SQL === '1';
const KEEP = process.env.BENCH_KEEP === '1';
const TASKS = 100_000;
const CONTACTS = 1_000;
const PROJECTS = 20;
const TAGS = 10;

type CaseKey = 'a' | 'b' | 'c' | 'd';
type ServerKey = 'fieldforge' | 'bare';

interface Seeded {
  stageIds: number[];
  projectIds: number[];
  contactIds: number[];
  taskIdRange: [number, number];
}

interface BenchCase {
  key: CaseKey;
  title: string;
  target: number;
  /** The request for autocannon (the same for both servers). */
  request: AutocannonRequest;
  /** One concrete request, for the correctness check. */
  sample(): { path: string; body: unknown };
  /** Checks the two answers to `sample()`; returns a description or throws. */
  check(ff: unknown, bare: unknown): string;
}

interface Measured {
  /** Responses the load generator received, and how long it ran (all rounds). */
  responses: number;
  seconds: number;
  errors: number;
  latencies: number[];
  /** Requests the server itself answered while measured (CPU and SQL are divided by these). */
  served: number;
  cpuUs: number;
  sysUs: number;
  pgCpuUs: number | null;
  statements: number;
  profiles: CpuProfile[];
}

function emptyMeasured(): Measured {
  return { responses: 0, seconds: 0, errors: 0, latencies: [], served: 0, cpuUs: 0, sysUs: 0, pgCpuUs: 0, statements: 0, profiles: [] };
}

interface Server {
  key: ServerKey;
  label: string;
  child: ChildProcess;
  port: number;
  appName: string;
}

function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

// ------------------------------------------------------------------------------------------------
// Setup: database, key, seed
// ------------------------------------------------------------------------------------------------

async function seed(client: pg.Client): Promise<Seeded> {
  const { rows: [admin] } = await client.query<{ uid: number; company: number }>(
    `SELECT u.id AS uid, u.company_id AS company FROM "user" u WHERE u.identifier = 'core.user_admin'`,
  );
  const audit = [admin!.uid, admin!.company];
  await client.query('BEGIN');
  await client.query(`INSERT INTO contact (name, email, phone, city, is_company, active, company_id,
      created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Contact ' || lpad(g::text, 4, '0'), 'contact' || g || '@example.com', '+1 555 ' || lpad(g::text, 4, '0'),
      (ARRAY['Lyon', 'Porto', 'Ghent', 'Turin', 'Basel'])[1 + g % 5], FALSE, TRUE, $2, now(), $1, now(), $1
    FROM generate_series(1, ${CONTACTS}) g`, audit);
  await client.query(`INSERT INTO project_tag (name, color, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Tag ' || lpad(g::text, 2, '0'), g % 8, now(), $1, now(), $1 FROM generate_series(1, ${TAGS}) g`, [admin!.uid]);
  await client.query(`INSERT INTO project_project (name, active, color, created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Project ' || lpad(g::text, 2, '0'), TRUE, g % 8, now(), $1, now(), $1 FROM generate_series(1, ${PROJECTS}) g`, [admin!.uid]);
  // Stages round-robin (20,000 each), deadlines spread over 2026, one of 1,000 contacts each,
  // 1% archived; every third task gets two tags.
  await client.query(`WITH p AS (SELECT array_agg(id ORDER BY id) AS a FROM project_project),
      s AS (SELECT array_agg(id ORDER BY sequence, id) AS a FROM project_stage),
      c AS (SELECT array_agg(id ORDER BY id) AS a FROM contact)
    INSERT INTO project_task (name, project_id, stage_id, priority, deadline, assignee_id, sequence,
      planned_hours, effective_hours, remaining_hours, subtask_count, active,
      created_date, created_by_id, updated_date, updated_by_id)
    SELECT 'Task ' || g, p.a[1 + (g / 7) % array_length(p.a, 1)], s.a[1 + g % array_length(s.a, 1)], (g % 3)::text,
      DATE '2026-01-01' + ((g * 7919) % 365), c.a[1 + (g * 31) % array_length(c.a, 1)], 10,
      (g % 40)::float8, (g % 17)::float8, (g % 40 - g % 17)::float8, 0, g % 100 <> 0,
      now(), $1, now(), $1
    FROM generate_series(1, ${TASKS}) g, p, s, c`, [admin!.uid]);
  await client.query(`WITH tg AS (SELECT array_agg(id ORDER BY id) AS a FROM project_tag)
    INSERT INTO project_task_tags_rel (project_task_id, project_tag_id)
    SELECT t.id, tg.a[1 + t.id % ${TAGS}] FROM project_task t, tg WHERE t.id % 3 = 0
    UNION ALL
    SELECT t.id, tg.a[1 + (t.id + 3) % ${TAGS}] FROM project_task t, tg WHERE t.id % 3 = 0`);
  await client.query('COMMIT');
  await client.query('ANALYZE');
  const ids = async (sql: string) => (await client.query<{ id: number }>(sql)).rows.map((r) => r.id);
  const { rows: [range] } = await client.query<{ lo: number; hi: number }>('SELECT min(id) AS lo, max(id) AS hi FROM project_task');
  return {
    stageIds: await ids('SELECT id FROM project_stage ORDER BY sequence, id'),
    projectIds: await ids('SELECT id FROM project_project ORDER BY id'),
    contactIds: await ids('SELECT id FROM contact ORDER BY id'),
    taskIdRange: [range!.lo, range!.hi],
  };
}

// ------------------------------------------------------------------------------------------------
// Cases
// ------------------------------------------------------------------------------------------------

function cases(seeded: Seeded, headers: Record<string, string>): BenchCase[] {
  const listStage = seeded.stageIds[1]!;
  const countStage = seeded.stageIds[2]!;
  const [lo, hi] = seeded.taskIdRange;
  // Tasks whose id is a multiple of 3 have two tags.
  const taggedId = () => {
    const id = lo + Math.floor(Math.random() * (hi - lo + 1));
    return Math.max(3, id - (id % 3));
  };
  const post = (path: string, body: unknown): AutocannonRequest => ({ method: 'POST', path, headers, body: JSON.stringify(body) });

  const listBody = { filter_str: `Q(stage=${listStage})`, order_by: ['deadline ASC'], limit: 50, fields: ['name', 'deadline', 'stage.name', 'assignee.name'] };
  const fetchBody = { fields: ['name', 'tags.name'] };
  const createBody = {
    name: 'Benchmark task', project: seeded.projectIds[0], stage: seeded.stageIds[0],
    assignee: seeded.contactIds[0], deadline: '2026-06-30',
  };
  const countBody = { filter_str: `Q(stage=${countStage})`, counter: true, limit: 1, fields: ['id'], order_by: ['id ASC'] };

  const same = (ff: unknown, bare: unknown, what: string) => {
    if (!isDeepStrictEqual(ff, bare)) {
      throw new Error(`${what}: the answers differ\n  fieldforge: ${JSON.stringify(ff).slice(0, 600)}\n  bare:       ${JSON.stringify(bare).slice(0, 600)}`);
    }
  };
  return [
    {
      key: 'a', target: 0.5,
      title: 'query 50 tasks of a stage by deadline, with stage.name + assignee.name',
      request: post('/api/query/ProjectTask', listBody),
      sample: () => ({ path: '/api/query/ProjectTask', body: listBody }),
      check(ff, bare) {
        if (!Array.isArray(ff) || ff.length !== 50) throw new Error(`(a) expected 50 tasks, got ${JSON.stringify(ff).slice(0, 200)}`);
        same(ff, bare, '(a)');
        const first = ff[0] as { stage: { name: string }; assignee: { name: string } };
        return `50 tasks, identical on both; first: stage '${first.stage.name}', assignee '${first.assignee.name}'`;
      },
    },
    {
      key: 'b', target: 0.4,
      title: 'fetch one task with tags.name (random task)',
      request: {
        ...post('/api/fetch/ProjectTask/3', fetchBody),
        setupRequest: (req) => ({ ...req, path: `/api/fetch/ProjectTask/${taggedId()}` }),
      },
      sample: () => ({ path: `/api/fetch/ProjectTask/${taggedId()}`, body: fetchBody }),
      check(ff, bare) {
        const tags = (ff as { tags?: unknown[] }).tags;
        if (!Array.isArray(tags) || tags.length !== 2) throw new Error(`(b) expected a task with 2 tags, got ${JSON.stringify(ff).slice(0, 200)}`);
        same(ff, bare, '(b)');
        return `task ${(ff as { id: number }).id} with 2 tags, identical on both`;
      },
    },
    {
      key: 'c', target: 0.3,
      title: 'create one task (name, project, stage, assignee, deadline)',
      request: post('/api/create/ProjectTask', createBody),
      sample: () => ({ path: '/api/create/ProjectTask', body: createBody }),
      check(ff, bare) {
        for (const [who, a] of [['fieldforge', ff], ['bare', bare]] as const) {
          const r = a as { id?: unknown; name?: unknown; display_name?: unknown };
          if (typeof r.id !== 'number' || r.name !== createBody.name || r.display_name !== createBody.name) {
            throw new Error(`(c) ${who} answered ${JSON.stringify(a)}`);
          }
        }
        return `created ${(ff as { id: number }).id} and ${(bare as { id: number }).id}, same answer shape`;
      },
    },
    {
      key: 'd', target: 0.8,
      title: 'counter of the tasks of a stage (count + 1-row page)',
      request: post('/api/query/ProjectTask', countBody),
      sample: () => ({ path: '/api/query/ProjectTask', body: countBody }),
      check(ff, bare) {
        const n = (ff as { count?: unknown }).count;
        if (typeof n !== 'number' || n <= 0) throw new Error(`(d) expected a count, got ${JSON.stringify(ff).slice(0, 200)}`);
        same(ff, bare, '(d)');
        return `count ${n} on both`;
      },
    },
  ];
}

// ------------------------------------------------------------------------------------------------
// Servers
// ------------------------------------------------------------------------------------------------

async function startServer(key: ServerKey, env: Record<string, string>): Promise<Server> {
  const { child, port } = await startServerProcess(key === 'fieldforge' ? 'bench/fieldforge-server.ts' : 'bench/bare-server.ts', env);
  return { key, label: key === 'fieldforge' ? 'FieldForge' : 'bare http+pg', child, port, appName: key === 'fieldforge' ? 'fieldforge' : 'ffbench-bare' };
}

const stopServer = (server: Server): Promise<void> => stopServerProcess(server);

async function call(server: Server, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch { /* keep text */ }
  return { status: res.status, json };
}

// ------------------------------------------------------------------------------------------------
// Measuring
// ------------------------------------------------------------------------------------------------

const CLK_TCK = (() => {
  try {
    return Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (µs) of each PostgreSQL backend serving `appName` in the database, from /proc. */
async function backendCpu(admin: pg.Client, dbName: string, appName: string): Promise<Map<number, number> | null> {
  const { rows } = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [dbName, appName]);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the command name.
      out.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK);
    } catch {
      return null; // PostgreSQL is not on this host (or not readable): no backend figures
    }
  }
  return out;
}

function backendDelta(before: Map<number, number> | null, after: Map<number, number> | null): number | null {
  if (!before || !after) return null;
  let sum = 0;
  for (const [pid, t] of after) sum += t - (before.get(pid) ?? 0);
  return sum;
}

/** The load running now, stopped on Ctrl-C. */
let currentJob: AutocannonInstance | null = null;

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** One autocannon run; resolves once the requests still in flight when it stops are answered. */
async function load(server: Server, c: BenchCase, seconds: number, latencies?: number[]): Promise<{ responses: number; errors: number; seconds: number }> {
  const t0 = performance.now();
  const job = autocannon({ url: `http://127.0.0.1:${server.port}`, connections: CONNECTIONS, duration: seconds, requests: [c.request] });
  currentJob = job;
  if (latencies) job.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await job;
  const elapsed = (performance.now() - t0) / 1000;
  await settle();
  return { responses: result['2xx'], errors: result.errors + result.timeouts + result.non2xx, seconds: elapsed };
}

/** Adds one measured run of `server` to `m`. */
async function measureRound(server: Server, c: BenchCase, seconds: number, m: Measured, admin: pg.Client, dbName: string): Promise<void> {
  type Cpu = { user: number; system: number; statements: number; served: number };
  const profiling = PROFILE && server.key === 'fieldforge';
  if (profiling) await call(server, 'POST', '/__prof/start');
  const cpu0 = (await call(server, 'GET', '/__cpu')).json as Cpu;
  const pg0 = await backendCpu(admin, dbName, server.appName);
  const run = await load(server, c, seconds, m.latencies);
  const cpu1 = (await call(server, 'GET', '/__cpu')).json as Cpu;
  const pg1 = await backendCpu(admin, dbName, server.appName);
  if (profiling) m.profiles.push((await call(server, 'POST', '/__prof/stop')).json as CpuProfile);
  m.responses += run.responses;
  m.errors += run.errors;
  m.seconds += run.seconds;
  m.served += cpu1.served - cpu0.served;
  m.cpuUs += cpu1.user + cpu1.system - cpu0.user - cpu0.system;
  m.sysUs += cpu1.system - cpu0.system;
  m.statements += cpu1.statements - cpu0.statements;
  const pgCpu = backendDelta(pg0, pg1);
  m.pgCpuUs = m.pgCpuUs === null || pgCpu === null ? null : m.pgCpuUs + pgCpu;
}

/**
 * Both servers on one case: a warm-up each, then ROUNDS runs each in the order A B B A A B B A…,
 * so a change of load on the machine during the case weighs on both alike.
 */
async function measureCase(c: BenchCase, ff: Server, bare: Server, admin: pg.Client, dbName: string): Promise<{ ff: Measured; bare: Measured }> {
  if (WARMUP > 0) for (const s of [ff, bare]) await load(s, c, WARMUP);
  const out = { fieldforge: emptyMeasured(), bare: emptyMeasured() };
  const seconds = DURATION / ROUNDS;
  for (let i = 0; i < ROUNDS; i++) {
    const order = i % 2 === 0 ? [ff, bare] : [bare, ff];
    for (const s of order) await measureRound(s, c, seconds, out[s.key], admin, dbName);
  }
  return { ff: out.fieldforge, bare: out.bare };
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

// ------------------------------------------------------------------------------------------------
// Output
// ------------------------------------------------------------------------------------------------

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

function printResults(all: { c: BenchCase; ff: Measured; bare: Measured }[], dbName: string, elapsed: number, loadBefore: number): void {
  const out: string[] = [];
  const rate = (m: Measured) => m.responses / m.seconds;
  const perReq = (x: number | null, m: Measured) => (x === null ? null : x / Math.max(1, m.served));
  const totalCpu = (m: Measured) => perReq(m.cpuUs, m)! + (perReq(m.pgCpuUs, m) ?? 0);
  out.push('');
  out.push(`FieldForge vs bare node:http + pg: ${TASKS.toLocaleString('en')} tasks, ${CONTACTS.toLocaleString('en')} contacts, API key, ${CONNECTIONS} connections;`);
  out.push(`per case and server ${DURATION} s of load in ${ROUNDS} interleaved rounds (A B B A…), after a ${WARMUP} s warm-up each.`);
  out.push(`Database ${dbName}; ${availableParallelism()} CPU cores shared by PostgreSQL, the server under load and the load generator (and anything else running).`);
  out.push(`Bare server: key checked ${process.env.BENCH_BARE_AUTH === 'db' ? 'in the database on every request' : 'in memory'}, statements ${process.env.BENCH_BARE_PREPARED === '0' ? 'unnamed' : 'prepared (named)'}.`);
  out.push('CPU µs/req: the server process (node; sys% of it in the kernel) and the PostgreSQL backends of its pool (PG);');
  out.push('SQL/req: statements per request, as each server counts them.');
  out.push('');
  const head = ['case', 'server', 'req/s', 'p50 ms', 'p99 ms', 'node µs/req', 'sys%', 'PG µs/req', 'SQL/req', 'errors'];
  const widths = [5, 14, 8, 7, 7, 12, 5, 10, 8, 6];
  out.push(head.map((h, i) => pad(h, widths[i]!, i >= 2)).join('  '));
  out.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const { c, ff, bare } of all) {
    for (const [label, m] of [['FieldForge', ff], ['bare http+pg', bare]] as const) {
      const sorted = [...m.latencies].sort((a, b) => a - b);
      const pgUs = perReq(m.pgCpuUs, m);
      out.push([
        pad(`(${c.key})`, widths[0]!), pad(label, widths[1]!),
        pad(rate(m).toFixed(0), widths[2]!, true),
        pad(percentile(sorted, 0.5).toFixed(1), widths[3]!, true),
        pad(percentile(sorted, 0.99).toFixed(1), widths[4]!, true),
        pad(perReq(m.cpuUs, m)!.toFixed(0), widths[5]!, true),
        pad(((100 * m.sysUs) / Math.max(1, m.cpuUs)).toFixed(0), widths[6]!, true),
        pad(pgUs === null ? 'n/a' : pgUs.toFixed(0), widths[7]!, true),
        pad((m.statements / Math.max(1, m.served)).toFixed(2), widths[8]!, true),
        pad(String(m.errors), widths[9]!, true),
      ].join('  '));
    }
  }
  out.push('');
  out.push('FieldForge / bare, req/s (measured) against the target; then node CPU per request (bare / FieldForge) and');
  out.push('node+PG CPU per request (bare / FieldForge), which is what req/s tends to when the machine is CPU-bound:');
  for (const { c, ff, bare } of all) {
    const ratio = rate(ff) / rate(bare);
    const nodeRatio = perReq(bare.cpuUs, bare)! / perReq(ff.cpuUs, ff)!;
    const cpuRatio = totalCpu(bare) / totalCpu(ff);
    out.push(`  (${c.key}) ${pad(c.title, 70)} ${ratio.toFixed(2)}  target ≥ ${c.target.toFixed(1)}  ${pad(ratio >= c.target ? 'met' : 'MISSED', 6)}  node CPU ${nodeRatio.toFixed(2)}  node+PG CPU ${cpuRatio.toFixed(2)}`);
  }
  out.push('');
  out.push(`whole run ${elapsed.toFixed(0)} s; 1-minute load average ${loadBefore.toFixed(1)} before measuring, ${loadavg()[0]!.toFixed(1)} after`);
  console.log(out.join('\n'));
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  const dbName = `ffbench_${randomBytes(4).toString('hex')}`;
  const engine = new PostgresEngine({ url: BASE_URL });
  const servers: Server[] = [];
  let admin: pg.Client | null = null;
  let created = false;
  let cleaning: Promise<void> | null = null;
  const cleanup = () => (cleaning ??= (async () => {
    currentJob?.stop();
    for (const s of servers) await stopServer(s).catch(() => {});
    await admin?.end().catch(() => {});
    if (created && !KEEP) {
      await engine.drop(dbName).then(() => log(`dropped ${dbName}`), (err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    }
    await engine.close().catch(() => {});
  })());
  const onSignal = () => {
    log('interrupted: cleaning up');
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    log(`creating ${dbName} (core, contacts, project)…`);
    const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
    await createDatabase(platform, dbName, { modules: ['contacts', 'project'] }); // drops it itself on failure
    created = true;
    const { key, serviceAccountId } = await platform.run(dbName, {}, () =>
      createServiceAccountKey({ name: 'benchmark', groups: ['core.group_admin', 'core.group_user'] }));
    platform.forget(dbName);
    await engine.closeDatabase(dbName);
    log(`  ${((Date.now() - started) / 1000).toFixed(1)} s`);

    admin = new pg.Client({ connectionString: databaseUrl(dbName), application_name: 'ffbench-run' });
    await admin.connect();
    const { rows: [account] } = await admin.query<{ user_id: number }>('SELECT user_id FROM service_account WHERE id = $1', [serviceAccountId]);
    const t0 = Date.now();
    log(`seeding ${CONTACTS} contacts, ${TAGS} tags, ${PROJECTS} projects, ${TASKS} tasks…`);
    const seeded = await seed(admin);
    log(`  ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const ff = await startServer('fieldforge', { DATABASE_URL: BASE_URL, BENCH_DB: dbName, FF_DB_POOL_MAX: '10' });
    servers.push(ff);
    const bare = await startServer('bare', { BENCH_DB_URL: databaseUrl(dbName), BENCH_KEY_HASH: hashApiKey(key), BENCH_UID: String(account!.user_id) });
    servers.push(bare);

    const headers = { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' };
    const only = (process.env.BENCH_CASES ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const selected = cases(seeded, headers).filter((c) => !only.length || only.includes(c.key));

    log('checking answers…');
    for (const c of selected) {
      const { path, body } = c.sample();
      if (SHOW_SQL) await call(ff, 'POST', '/__trace/start');
      const a = await call(ff, 'POST', path, headers, body);
      const trace = SHOW_SQL ? ((await call(ff, 'POST', '/__trace/stop')).json as { statements: string[] }).statements : [];
      const b = await call(bare, 'POST', path, headers, body);
      if (a.status !== 200) throw new Error(`(${c.key}) FieldForge answered ${a.status}: ${JSON.stringify(a.json).slice(0, 400)}`);
      if (b.status !== 200) throw new Error(`(${c.key}) bare server answered ${b.status}: ${JSON.stringify(b.json).slice(0, 400)}`);
      log(`  (${c.key}) ok: ${c.check(a.json, b.json)}`);
      if (SHOW_SQL) {
        log(`      FieldForge ran ${trace.length} statement(s):`);
        for (const s of trace) log(`        ${s.replace(/\s+/g, ' ').slice(0, 400)}`);
      }
    }

    const loadBefore = loadavg()[0]!;
    const results: { c: BenchCase; ff: Measured; bare: Measured }[] = [];
    for (const c of selected) {
      log(`measuring (${c.key}) ${c.title}…`);
      const m = await measureCase(c, ff, bare, admin, dbName);
      results.push({ c, ...m });
      if (m.ff.profiles.length) {
        log(`  FieldForge CPU profile of (${c.key}), ${m.ff.served} requests:`);
        log(formatSummary(summarizeProfiles(m.ff.profiles, 25), m.ff.served));
      }
    }
    printResults(results, dbName, (Date.now() - started) / 1000, loadBefore);
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : err);
  process.exitCode = 1;
});
