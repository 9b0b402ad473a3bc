/**
 * The measuring both API benchmarks share (`run.ts`, `ceiling-bench.ts`): FieldForge and a bare
 * `node:http` + `pg` server, each in its own process, loaded with autocannon in interleaved rounds
 * (A B B A…), with the CPU time of each server process and of the PostgreSQL backends of its pool
 * read before and after every round, and the statements and requests each server counted itself
 * (`GET /__cpu`).
 *
 * Environment: BENCH_DURATION (measured seconds per case and server, default 8), BENCH_ROUNDS (in
 * how many interleaved runs, default 4), BENCH_WARMUP (seconds, default 1), BENCH_CONNECTIONS
 * (default 10), BENCH_PROFILE=1 (CPU-profile the FieldForge server during each measured run),
 * BENCH_SQL=1 (the statements FieldForge runs for one request of each case, each cut at
 * BENCH_SQL_CHARS characters, 400 by default), BENCH_KEEP=1 (keep the database).
 */
import { execSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon, { type AutocannonInstance, type AutocannonRequest } from 'autocannon';
import pg from 'pg';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { BENCH_BASE_URL, createBenchDatabaseWithKeys, databaseUrl, type BenchKey } from './bench-database.js';
import type { CpuProfile } from './profile.js';
import { startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';

export const DURATION = Number(process.env.BENCH_DURATION ?? 8);
export const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 4));
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PROFILE = process.env.BENCH_PROFILE === '1';
const SHOW_SQL = process.env.BENCH_SQL === '1';
const KEEP = process.env.BENCH_KEEP === '1';

export type ServerKey = 'fieldforge' | 'bare';

export interface Server {
  key: ServerKey;
  label: string;
  child: ChildProcess;
  port: number;
  /** The `application_name` of its pool's connections: how its PostgreSQL backends are found. */
  appName: string;
}

export interface Measured {
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

export function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

/** Starts FieldForge (bench/fieldforge-server.ts) or a bare server (`bareScript`). */
export async function startServer(
  key: ServerKey, env: Record<string, string>, bareScript = 'bench/bare-server.ts',
  /** Another bare server beside the first (its pool's application name and its label). */
  named?: { appName: string; label: string },
): Promise<Server> {
  // BENCH_BARE_NODE_ARGS: node flags for the bare server (none by default), e.g. FieldForge's own.
  const bareArgs = key === 'fieldforge' ? [] : (process.env.BENCH_BARE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const { child, port } = await startServerProcess(key === 'fieldforge' ? 'bench/fieldforge-server.ts' : bareScript, env, bareArgs);
  if (named) return { key, child, port, ...named };
  return { key, label: key === 'fieldforge' ? 'FieldForge' : 'bare http+pg', child, port, appName: key === 'fieldforge' ? 'fieldforge' : 'ffbench-bare' };
}

/**
 * FieldForge as built in another checkout (`root`), in the baseline's place: an A/B of two versions
 * in one run. Its PostgreSQL backends share the application name of the other FieldForge server's,
 * whose idle backends then count in its rounds (next to nothing).
 */
export async function startBaselineFieldforge(root: string, env: Record<string, string>): Promise<Server> {
  const { child, port } = await startServerProcess('bench/fieldforge-server.ts', env, [], root, process.env.BENCH_BASELINE_NODE_ARGS ?? process.env.BENCH_FF_NODE_ARGS);
  return { key: 'bare', label: 'FF baseline', child, port, appName: 'fieldforge' };
}

export async function call(server: { port: number }, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; json: any }> {
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

/**
 * One request to FieldForge and the same to the bare server, both required to answer 200; with
 * BENCH_SQL=1 the statements FieldForge ran for it are logged.
 */
export async function callBoth(ff: Server, bare: Server, what: string, path: string, headers: Record<string, string>, body: unknown): Promise<{ ff: unknown; bare: unknown; statements: string[] }> {
  if (SHOW_SQL) await call(ff, 'POST', '/__trace/start');
  const a = await call(ff, 'POST', path, headers, body);
  const statements = SHOW_SQL ? ((await call(ff, 'POST', '/__trace/stop')).json as { statements: string[] }).statements : [];
  const b = await call(bare, 'POST', path, headers, body);
  if (a.status !== 200) throw new Error(`${what} FieldForge answered ${a.status}: ${JSON.stringify(a.json).slice(0, 400)}`);
  if (b.status !== 200) throw new Error(`${what} bare server answered ${b.status}: ${JSON.stringify(b.json).slice(0, 400)}`);
  return { ff: a.json, bare: b.json, statements };
}

export function logStatements(statements: string[]): void {
  if (!SHOW_SQL) return;
  log(`      FieldForge ran ${statements.length} statement(s):`);
  for (const s of statements) log(`        ${s.replace(/\s+/g, ' ').slice(0, Number(process.env.BENCH_SQL_CHARS ?? 400))}`);
}

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

function stopLoad(): void {
  currentJob?.stop();
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** One autocannon run; resolves once the requests still in flight when it stops are answered. */
async function load(server: Server, request: AutocannonRequest, seconds: number, latencies?: number[]): Promise<{ responses: number; errors: number; seconds: number }> {
  const t0 = performance.now();
  const job = autocannon({ url: `http://127.0.0.1:${server.port}`, connections: CONNECTIONS, duration: seconds, requests: [request] });
  currentJob = job;
  if (latencies) job.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await job;
  const elapsed = (performance.now() - t0) / 1000;
  await settle();
  return { responses: result['2xx'], errors: result.errors + result.timeouts + result.non2xx, seconds: elapsed };
}

/** Adds one measured run of `server` to `m`. */
async function measureRound(server: Server, request: AutocannonRequest, seconds: number, m: Measured, admin: pg.Client, dbName: string): Promise<void> {
  type Cpu = { user: number; system: number; statements: number; served: number };
  const profiling = PROFILE && server.key === 'fieldforge';
  if (profiling) await call(server, 'POST', '/__prof/start');
  const cpu0 = (await call(server, 'GET', '/__cpu')).json as Cpu;
  const pg0 = await backendCpu(admin, dbName, server.appName);
  const run = await load(server, request, seconds, m.latencies);
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
 * Both servers on one request: a warm-up each, then ROUNDS runs each in the order A B B A A B B A…,
 * so a change of load on the machine during the case weighs on both alike.
 */
export async function measureCase(request: AutocannonRequest, ff: Server, bare: Server, admin: pg.Client, dbName: string): Promise<{ ff: Measured; bare: Measured }> {
  const [a, b] = await measureServers(request, [ff, bare], admin, dbName);
  return { ff: a!, bare: b! };
}

/**
 * `measureCase` for any number of servers: a warm-up each, then ROUNDS runs each, the order
 * reversed every other round (A B C C B A…). The figures come back in the order of `servers`.
 */
export async function measureServers(request: AutocannonRequest, servers: readonly Server[], admin: pg.Client, dbName: string): Promise<Measured[]> {
  if (WARMUP > 0) for (const s of servers) await load(s, request, WARMUP);
  const out = servers.map(() => emptyMeasured());
  const seconds = DURATION / ROUNDS;
  for (let i = 0; i < ROUNDS; i++) {
    const order = servers.map((s, k) => ({ s, m: out[k]! }));
    if (i % 2 === 1) order.reverse();
    for (const { s, m } of order) await measureRound(s, request, seconds, m, admin, dbName);
  }
  return out;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** The figures of one measured server, per second and per request served. */
export interface Figures {
  rate: number;
  p50: number;
  p99: number;
  nodeUs: number;
  sysPct: number;
  /** null when the PostgreSQL backends could not be read (another host). */
  pgUs: number | null;
  /** node + PostgreSQL backends. */
  totalUs: number;
  sqlPerRequest: number;
}

export function figuresOf(m: Measured): Figures {
  const sorted = [...m.latencies].sort((a, b) => a - b);
  const served = Math.max(1, m.served);
  const pgUs = m.pgCpuUs === null ? null : m.pgCpuUs / served;
  return {
    rate: m.responses / m.seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    nodeUs: m.cpuUs / served,
    sysPct: (100 * m.sysUs) / Math.max(1, m.cpuUs),
    pgUs,
    totalUs: m.cpuUs / served + (pgUs ?? 0),
    sqlPerRequest: m.statements / served,
  };
}

export function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

/** A table: a header row, a rule, then the rows; columns from index `rightFrom` on are right-aligned. */
export function table(head: string[], widths: number[], rows: string[][], rightFrom: number): string[] {
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!, i >= rightFrom)).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

/** An API key of the run's database, with its service account's user and that user's companies. */
export interface BenchAccount {
  key: string;
  serviceAccountId: number;
  userId: number;
  companies: number[];
}

/**
 * What a benchmark run holds — its server processes, its client, its database once `created` —
 * released once by `cleanup`: after `stopJobs` (the load running now), on Ctrl-C (then the process
 * exits) or from the run's `finally`. The database is dropped unless BENCH_KEEP=1.
 */
export interface BenchRun {
  /** `<prefix>_<random>`. */
  dbName: string;
  /** The engine of the PostgreSQL server the benchmarks use (BENCH_BASE_URL). */
  engine: PostgresEngine;
  servers: ServerProcess[];
  client: pg.Client | null;
  created: boolean;
  /**
   * Creates the database with `modules` and `keys` (bench-database.ts) and connects `client` to it
   * (application `ffbench-run`), saying so on stderr; answers the client and each key's account.
   */
  open(modules: string[], keys: BenchKey[], addonsPaths?: string[]): Promise<{ client: pg.Client; accounts: BenchAccount[] }>;
  cleanup(): Promise<void>;
}

export function benchRun(prefix = 'ffbench', stopJobs: () => void = stopLoad): BenchRun {
  const dbName = `${prefix}_${randomBytes(4).toString('hex')}`;
  const engine = new PostgresEngine({ url: BENCH_BASE_URL });
  let cleaning: Promise<void> | null = null;
  const run: BenchRun = {
    dbName,
    engine,
    servers: [],
    client: null,
    created: false,
    async open(modules, keys, addonsPaths = []) {
      const t0 = Date.now();
      log(`creating ${dbName} (${['core', ...modules].join(', ')})…`);
      const created = await createBenchDatabaseWithKeys(engine, dbName, modules, keys, addonsPaths);
      run.created = true;
      const client = new pg.Client({ connectionString: databaseUrl(dbName), application_name: 'ffbench-run' });
      run.client = client;
      await client.connect();
      const { rows } = await client.query<{ id: number; user_id: number; companies: number[] }>(`SELECT a.id, a.user_id,
          ARRAY(SELECT company_id FROM user_companies_rel WHERE user_id = u.id UNION SELECT u.company_id WHERE u.company_id IS NOT NULL) AS companies
        FROM service_account a JOIN "user" u ON u.id = a.user_id WHERE a.id = ANY($1)`, [created.map((k) => k.serviceAccountId)]);
      const accounts = created.map((k) => {
        const row = rows.find((r) => r.id === k.serviceAccountId)!;
        return { ...k, userId: row.user_id, companies: row.companies };
      });
      log(`  ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      return { client, accounts };
    },
    cleanup: () => (cleaning ??= (async () => {
      stopJobs();
      for (const s of run.servers) await stopServerProcess(s).catch(() => {});
      await run.client?.end().catch(() => {});
      if (run.created && !KEEP) await engine.drop(dbName).then(() => log(`dropped ${dbName}`), (err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
      else if (run.created) log(`kept ${dbName} (BENCH_KEEP=1)`);
      await engine.close().catch(() => {});
    })()),
  };
  const onSignal = () => {
    log('interrupted: cleaning up');
    void run.cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return run;
}
