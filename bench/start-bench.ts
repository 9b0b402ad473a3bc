/**
 * Cold start and idle memory (issue 15, items 3 and 4): how long `fieldforge serve` takes from
 * process spawn to the first 200 of an authenticated request, with many FieldForge databases in
 * the cluster, and how much memory the server holds idle and per additional open database. Not a
 * test: it prints figures beside their targets and never fails CI.
 *
 * 1. Creates `ffstart_<random>_00` with core, contacts, project and sales and an administrator's
 *    API key, then clones it (`CREATE DATABASE … TEMPLATE`) until BENCH_START_DATABASES (50) of
 *    ours are in the cluster; the clones share the key.
 * 2. Measures, median of BENCH_START_RUNS (5) runs after one unmeasured warm-up each, spawn → the
 *    "serving" line → the first 200 of `POST /api/query/ProjectStage` with the key, for
 *    `node bin/fieldforge.js serve`, `npm start`, `npx fieldforge serve`, a bare `node:http` + `pg`
 *    server doing the same request (the baseline), and PGlite with an existing data directory.
 *    The resident set of the `node bin/fieldforge.js` runs is read 2 s after their first answer.
 * 3. Idle memory as an operator sees it: one more server, its resident set once settled
 *    (BENCH_START_SETTLE seconds without a request, 30: V8 gives memory back only after a while
 *    idle) with one open database, then with BENCH_START_EXTRA (10) more that answered a request
 *    each; and one under the inspector: heap after a full collection, the same way. The growth
 *    ÷ that number is the memory of an additional open database.
 * 4. Drops every database it made and removes its directories (also on error or Ctrl-C).
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_START_RUNS,
 * BENCH_START_DATABASES, BENCH_START_EXTRA, BENCH_START_SETTLE, BENCH_START_SKIP (e.g.
 * `npx,pglite`: variants left out), BENCH_START_ROOT (the FieldForge checkout to start, default
 * this one: another version measured against the same databases, e.g. `git archive HEAD`
 * unpacked with a `node_modules` link).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import WebSocket from 'ws';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { BENCH_BASE_URL, createBenchDatabase, databaseUrl } from './bench-database.js';
import { memoryOf } from './server-process.js';
import { freePort } from '../test/support/redis-server.js';

const ROOT = process.env.BENCH_START_ROOT || fileURLToPath(new URL('..', import.meta.url));
const RUNS = Math.max(1, Number(process.env.BENCH_START_RUNS ?? 5));
const DATABASES = Math.max(1, Number(process.env.BENCH_START_DATABASES ?? 50));
const EXTRA = Math.max(1, Math.min(DATABASES - 1, Number(process.env.BENCH_START_EXTRA ?? 10)));
const SETTLE_MS = 1000 * Number(process.env.BENCH_START_SETTLE ?? 30);
const SKIP = new Set((process.env.BENCH_START_SKIP ?? '').split(',').map((s) => s.trim()).filter(Boolean));
const MODULES = ['contacts', 'project', 'sales'];
const MiB = 1024 * 1024;

/** The request every variant answers: small, authenticated, reading one table. */
const QUERY = { fields: ['name'], order_by: ['sequence ASC'] };

/**
 * The baseline: a bare `node:http` + `pg` server that checks the key in the database and reads the
 * stages, as plain JavaScript (no TypeScript loader), started the same way as the others.
 */
const BARE_SERVER = `
import { createHash } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
const pool = new pg.Pool({ connectionString: process.env.BARE_DB_URL, max: 10 });
const server = http.createServer(async (req, res) => {
  try {
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const hash = createHash('sha256').update(key).digest('hex');
    const auth = await pool.query('SELECT a.user_id FROM api_key k JOIN service_account a ON a.id = k.service_account_id WHERE k.key_hash = $1 AND k.revoked_at IS NULL', [hash]);
    if (!auth.rows.length) { res.writeHead(401).end(); return; }
    const { rows } = await pool.query('SELECT id, name FROM project_stage ORDER BY sequence, id');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(rows.map((r) => ({ id: r.id, display_name: r.name, name: r.name }))));
  } catch (err) {
    res.writeHead(500).end(String(err));
  }
});
const port = Number(process.argv[1]);
server.listen(port, '127.0.0.1', () => console.log('bare serving on http://127.0.0.1:' + port));
process.once('SIGTERM', () => { server.close(); pool.end().then(() => process.exit(0)); });
`;

interface Variant {
  key: string;
  label: string;
  /** Command and arguments; `port` is the listen port. */
  command(port: number): string[];
  env: Record<string, string>;
  dbName: string;
  apiKey: string;
  /** Whether the spawned process is the server itself (its memory can be read). */
  direct: boolean;
  target?: number;
}

interface Run {
  listening: number;
  first: number;
  rssKiB: number | null;
}

function log(msg: string): void {
  process.stderr.write(`${msg}\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/** The children running now: stopped on the way out whatever happens. */
const running = new Set<ChildProcess>();

interface Spawned {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the time (performance.now()) `pattern` first appears in the output. */
  seen(pattern: RegExp, ms?: number): Promise<number>;
}

function start(command: string[], env: Record<string, string>): Spawned {
  const { FF_DEV: _dev, FF_ADDONS_PATH: _addons, ...inherited } = process.env;
  // Its own process group: `npm start` and `npx` run the server as a grandchild.
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT, env: { ...inherited, FF_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  const waiters: { pattern: RegExp; resolve: (t: number) => void }[] = [];
  const onData = (d: Buffer) => {
    const now = performance.now();
    out += d.toString();
    for (const w of [...waiters]) {
      if (w.pattern.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(now);
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return {
    child,
    output: () => out,
    seen: (pattern, ms = 120_000) => new Promise<number>((resolve, reject) => {
      if (pattern.test(out)) return resolve(performance.now());
      const timer = setTimeout(() => reject(new Error(`${pattern} not seen within ${ms} ms:\n${out}`)), ms);
      waiters.push({ pattern, resolve: (t) => { clearTimeout(timer); resolve(t); } });
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${command.join(' ')} exited (${code}) before ${pattern}:\n${out}`)); });
    }),
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch { /* gone */ }
  };
  group('SIGTERM');
  const timer = setTimeout(() => group('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
  // npm's child may outlive npm by a moment: the next run needs the port and (PGlite) the lock.
  for (let i = 0; i < 50; i++) {
    try {
      process.kill(-child.pid!, 0);
    } catch {
      return;
    }
    await sleep(100);
  }
  group('SIGKILL');
}

async function ask(port: number, dbName: string, apiKey: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}/api/query/ProjectStage`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'x-db-name': dbName, 'content-type': 'application/json' },
    body: JSON.stringify(QUERY),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${dbName}: answered ${res.status}: ${text.slice(0, 400)}`);
  const rows = JSON.parse(text) as { name: string }[];
  if (!Array.isArray(rows) || rows.length < 2) throw new Error(`${dbName}: unexpected answer ${text.slice(0, 200)}`);
  return rows;
}

/** One cold start: spawn → "serving" line → first 200; then (direct runs) the resident set 2 s later. */
async function coldStart(v: Variant): Promise<Run> {
  const port = await freePort();
  const t0 = performance.now();
  const s = start(v.command(port), v.env);
  try {
    const listening = await s.seen(/serving on http:\/\//);
    await ask(port, v.dbName, v.apiKey);
    const first = performance.now();
    let rssKiB: number | null = null;
    if (v.direct) {
      await sleep(2_000);
      rssKiB = memoryOf(s.child.pid!).rss;
    }
    return { listening: listening - t0, first: first - t0, rssKiB };
  } finally {
    await stop(s.child);
  }
}

async function measureVariant(v: Variant): Promise<Run[]> {
  log(`${v.label}: warm-up + ${RUNS} runs…`);
  await coldStart(v);
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await coldStart(v);
    log(`  run ${i + 1}: serving at ${r.listening.toFixed(0)} ms, first 200 at ${r.first.toFixed(0)} ms${r.rssKiB ? `, RSS ${(r.rssKiB / 1024).toFixed(0)} MiB` : ''}`);
    runs.push(r);
  }
  return runs;
}

/** Sends `calls` in turn to the inspected process (DevTools protocol) and answers the last one's result. */
async function inspect<T>(wsUrl: string, calls: { method: string; params?: Record<string, unknown> }[]): Promise<T> {
  const socket = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  try {
    let last: unknown;
    for (const [i, call] of calls.entries()) {
      last = await new Promise((resolve, reject) => {
        const onMessage = (data: WebSocket.RawData) => {
          const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: unknown };
          if (msg.id !== i + 1) return;
          socket.off('message', onMessage);
          if (msg.error) reject(new Error(JSON.stringify(msg.error)));
          else resolve(msg.result);
        };
        socket.on('message', onMessage);
        socket.send(JSON.stringify({ id: i + 1, ...call }));
      });
    }
    return last as T;
  } finally {
    socket.close();
  }
}

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

/** Memory of the inspected server after a full collection and a moment to settle. */
async function collectedMemory(wsUrl: string, pid: number): Promise<Memory> {
  await inspect(wsUrl, [{ method: 'HeapProfiler.collectGarbage' }]);
  await sleep(1_000);
  const result = await inspect<{ result: { value: string } }>(wsUrl, [
    { method: 'HeapProfiler.collectGarbage' },
    { method: 'Runtime.evaluate', params: { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true } },
  ]);
  const usage = JSON.parse(result.result.value) as { heapUsed: number; external: number };
  return { rss: memoryOf(pid).rss * 1024, heapUsed: usage.heapUsed, external: usage.external };
}

/** Resident set (bytes) of an idle server once V8 has given back what it gives back when idle. */
async function settledRss(pid: number): Promise<number> {
  await sleep(SETTLE_MS);
  return memoryOf(pid).rss * 1024;
}

interface Idle {
  /** Resident set 2 s after the first answer, then settled; then settled with 1 + EXTRA open. */
  early: number;
  one: number;
  more: number;
}

/** Resident set of a plain server (no inspector) idle with one, then 1 + EXTRA open databases. */
async function measureIdle(env: Record<string, string>, names: string[], apiKey: string): Promise<Idle> {
  const port = await freePort();
  const s = start([process.execPath, 'bin/fieldforge.js', 'serve', '--port', String(port), '--host', '127.0.0.1'], env);
  try {
    await s.seen(/serving on http:\/\//);
    const pid = s.child.pid!;
    await ask(port, names[0]!, apiKey);
    await sleep(2_000);
    const early = memoryOf(pid).rss * 1024;
    const one = await settledRss(pid);
    for (const name of names.slice(1, 1 + EXTRA)) await ask(port, name, apiKey);
    return { early, one, more: await settledRss(pid) };
  } finally {
    await stop(s.child);
  }
}

/** Memory of the server under the inspector after full collections: no, one and 1 + EXTRA open databases. */
async function measureHeap(env: Record<string, string>, names: string[], apiKey: string): Promise<{ none: Memory; one: Memory; more: Memory }> {
  const port = await freePort();
  const s = start([process.execPath, '--inspect=127.0.0.1:0', 'bin/fieldforge.js', 'serve', '--port', String(port), '--host', '127.0.0.1'], env);
  try {
    await s.seen(/serving on http:\/\//);
    const wsUrl = /Debugger listening on (ws:\/\/\S+)/.exec(s.output())![1]!;
    const pid = s.child.pid!;
    const none = await collectedMemory(wsUrl, pid);
    await ask(port, names[0]!, apiKey);
    const one = await collectedMemory(wsUrl, pid);
    for (const name of names.slice(1, 1 + EXTRA)) await ask(port, name, apiKey);
    const more = await collectedMemory(wsUrl, pid);
    return { none, one, more };
  } finally {
    await stop(s.child);
  }
}

/** Connections to our databases right after the server said it serves, before any request. */
async function connectionsAtStart(env: Record<string, string>, prefix: string, admin: pg.Client): Promise<number> {
  const port = await freePort();
  const s = start([process.execPath, 'bin/fieldforge.js', 'serve', '--port', String(port), '--host', '127.0.0.1'], env);
  try {
    await s.seen(/serving on http:\/\//);
    await sleep(500);
    const { rows: [row] } = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname LIKE $1 || '\\_%'`, [prefix]);
    return row!.n;
  } finally {
    await stop(s.child);
  }
}

/** How `bin/fieldforge.js` of ROOT starts now: compiled (dist/ up to date) or from its sources. */
async function howItRuns(): Promise<string> {
  try {
    const { isFresh } = (await import(pathToFileURL(join(ROOT, 'bin', 'build-stamp.js')).href)) as { isFresh(root: string): boolean };
    return isFresh(ROOT) ? 'compiled (dist/ up to date)' : 'from its TypeScript sources (dist/ missing or older than a source: `npm run build`)';
  } catch {
    return 'from its TypeScript sources (no build step)';
  }
}

function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

function row(label: string, runs: Run[], target?: number): string {
  const first = runs.map((r) => r.first);
  const m = median(first);
  const verdict = target === undefined ? '' : `  target ≤ ${target} ms  ${m <= target ? 'met' : 'MISSED'}`;
  const spread = `(${Math.min(...first).toFixed(0)}–${Math.max(...first).toFixed(0)})`;
  return `  ${label.padEnd(44)} ${m.toFixed(0).padStart(6)} ms ${spread.padEnd(13)} serving at ${median(runs.map((r) => r.listening)).toFixed(0).padStart(5)} ms, first request ${median(runs.map((r) => r.first - r.listening)).toFixed(0).padStart(4)} ms${verdict}`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const prefix = `ffstart_${randomBytes(4).toString('hex')}`;
  const engine = new PostgresEngine({ url: BENCH_BASE_URL });
  const created: string[] = [];
  const dirs: string[] = [];
  let admin: pg.Client | null = null;
  let cleaning: Promise<void> | null = null;
  const cleanup = () => (cleaning ??= (async () => {
    for (const child of running) await stop(child).catch(() => {});
    await admin?.end().catch(() => {});
    for (const name of created.reverse()) {
      await engine.drop(name).catch((err: unknown) => log(`could not drop ${name}: ${String(err)}`));
    }
    if (created.length) log(`dropped ${created.length} database(s)`);
    await engine.close().catch(() => {});
    for (const dir of dirs) await rm(dir, { recursive: true, force: true }).catch(() => {});
  })());
  const onSignal = () => {
    log('interrupted: cleaning up');
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const how = await howItRuns();
    log(`${ROOT}: runs ${how}`);
    const names = Array.from({ length: DATABASES }, (_, i) => `${prefix}_${String(i).padStart(2, '0')}`);
    log(`creating ${names[0]} (core, ${MODULES.join(', ')}) and ${DATABASES - 1} clones…`);
    created.push(names[0]!);
    const apiKey = await createBenchDatabase(engine, names[0]!, MODULES, 'start-bench');
    for (const name of names.slice(1)) {
      await engine.clone(names[0]!, name);
      created.push(name);
    }
    const all = await engine.list();
    log(`  ${((Date.now() - started) / 1000).toFixed(0)} s; ${all.length} FieldForge databases in the cluster`);
    admin = new pg.Client({ connectionString: databaseUrl('postgres'), application_name: 'ffstart-bench' });
    await admin.connect();

    const dataDir = await mkdtemp(join(tmpdir(), 'ff-start-bench-'));
    dirs.push(dataDir);
    const pgEnv = { DATABASE_URL: BENCH_BASE_URL, FF_DATA_DIR: dataDir };
    // The measured database is the last one listed: nothing before it may be needed to answer.
    const target = names[DATABASES - 1]!;
    const base = { dbName: target, apiKey, env: pgEnv };
    const variants: Variant[] = [
      { ...base, key: 'cli', label: 'node bin/fieldforge.js serve (PostgreSQL)', direct: true, target: 1000,
        command: (port) => [process.execPath, 'bin/fieldforge.js', 'serve', '--port', String(port), '--host', '127.0.0.1'] },
      { ...base, key: 'npm', label: 'npm start (PostgreSQL)', direct: false, target: 1000,
        command: (port) => ['npm', 'start', '--silent', '--', '--port', String(port), '--host', '127.0.0.1'] },
      { ...base, key: 'npx', label: 'npx fieldforge serve (PostgreSQL)', direct: false,
        command: (port) => ['npx', 'fieldforge', 'serve', '--port', String(port), '--host', '127.0.0.1'] },
      { ...base, key: 'bare', label: 'bare node:http + pg (baseline)', direct: true,
        env: { BARE_DB_URL: databaseUrl(target) }, command: (port) => [process.execPath, '--input-type=module', '-e', BARE_SERVER, String(port)] },
    ];

    const results: { v: Variant; runs: Run[] }[] = [];
    for (const v of variants) if (!SKIP.has(v.key)) results.push({ v, runs: await measureVariant(v) });

    let pglite: Run[] | null = null;
    if (!SKIP.has('pglite')) {
      const liteDir = await mkdtemp(join(tmpdir(), 'ff-start-bench-pglite-'));
      dirs.push(liteDir);
      const liteEnv = { DATABASE_URL: '', FF_DATA_DIR: liteDir };
      log('PGlite: creating database main with the same modules…');
      const cli = async (args: string[]) => {
        const s = start([process.execPath, 'bin/fieldforge.js', ...args], liteEnv);
        const code = await new Promise<number | null>((resolve) => s.child.once('exit', resolve));
        if (code !== 0) throw new Error(`fieldforge ${args.join(' ')} exited with ${code}:\n${s.output()}`);
        return s.output();
      };
      await cli(['db', 'create', 'main', '--modules', MODULES.join(','), '--admin-password', `pw-${randomBytes(8).toString('hex')}`]);
      const liteKey = (await cli(['apikey', 'create', '-db', 'main', '--name', 'start-bench', '--groups', 'core.group_admin,core.group_user'])).trim().split('\n').at(-1)!;
      pglite = await measureVariant({
        key: 'pglite', label: 'node bin/fieldforge.js serve (PGlite)', direct: true, target: 2000, dbName: 'main', apiKey: liteKey, env: liteEnv,
        command: (port) => [process.execPath, 'bin/fieldforge.js', 'serve', '--port', String(port), '--host', '127.0.0.1'],
      });
    }

    log('connections to our databases right after start…');
    const atStart = await connectionsAtStart(pgEnv, prefix, admin);
    const others = [target, ...names.slice(0, EXTRA)];
    log(`idle memory: one open database, then ${EXTRA} more, each settled ${SETTLE_MS / 1000} s…`);
    const idle = await measureIdle(pgEnv, others, apiKey);
    log(`heap: the same under the inspector, after full collections…`);
    const memory = await measureHeap(pgEnv, others, apiKey);

    const out: string[] = [''];
    out.push(`Cold start, spawn → first 200 of an authenticated POST /api/query/ProjectStage (API key), median of ${RUNS} (min–max);`);
    out.push(`${DATABASES} FieldForge databases of ours (core, ${MODULES.join(', ')}) in a cluster of ${all.length}; the measured one is listed last.`);
    out.push(`${ROOT} runs ${how}; ${availableParallelism()} CPU cores, 1-minute load average ${loadavg()[0]!.toFixed(1)} at the end.`);
    out.push('');
    for (const { v, runs } of results) out.push(row(v.label, runs, v.target));
    if (pglite) out.push(row('node bin/fieldforge.js serve (PGlite, existing dir)', pglite, 2000));
    out.push('');
    const cli = results.find((r) => r.v.key === 'cli');
    const rss = cli?.runs.map((r) => r.rssKiB!).filter(Boolean) ?? [];
    if (rss.length) out.push(`RSS 2 s after the first answer, one open database (median of the runs above): ${mib(median(rss) * 1024)}`);
    const lite = pglite?.map((r) => r.rssKiB!).filter(Boolean) ?? [];
    if (lite.length) out.push(`RSS on PGlite, the same: ${mib(median(lite) * 1024)}`);
    out.push(`Idle RSS with one open database, settled (${SETTLE_MS / 1000} s without a request): ${mib(idle.one)}  target ≤ 120 MiB  ${idle.one <= 120 * MiB ? 'met' : 'MISSED'}  (${mib(idle.early)} 2 s after its answer)`);
    out.push(`Idle RSS with ${1 + EXTRA} open databases, settled: ${mib(idle.more)}`);
    out.push(`Connections to our ${DATABASES} databases while serving, before any request: ${atStart}`);
    out.push('');
    out.push('Under the inspector, after a full collection (RSS / heap used / external):');
    const line = (label: string, m: Memory) => `  ${label.padEnd(36)} ${mib(m.rss).padStart(10)} ${mib(m.heapUsed).padStart(10)} ${mib(m.external).padStart(10)}`;
    out.push(line('serving, no database open', memory.none));
    out.push(line('one database open', memory.one));
    out.push(line(`${1 + EXTRA} databases open`, memory.more));
    const perRss = (idle.more - idle.one) / EXTRA;
    const perHeap = (memory.more.heapUsed - memory.one.heapUsed) / EXTRA;
    out.push(`Per additional open database (core, ${MODULES.join(', ')}): heap ${mib(perHeap)} (after full collections), RSS ${mib(perRss)} (settled)  target ≤ 2 MiB  ${Math.max(perRss, perHeap) <= 2 * MiB ? 'met' : 'MISSED'}`);
    out.push('');
    out.push(`whole run ${((Date.now() - started) / 1000).toFixed(0)} s`);
    console.log(out.join('\n'));
  } finally {
    await cleanup();
  }
}

await main();
