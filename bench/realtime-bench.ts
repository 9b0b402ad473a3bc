/**
 * `BENCH_ONLY=realtime npm run bench`: the realtime socket (issue 14 item 8).
 *
 * (a) 10,000 idle sockets on one FieldForge worker (`GET /api/ws`, an API key, the hello frame
 *     received on each): the server's resident memory per socket beyond the same server with no
 *     socket, after a full garbage collection on both sides of the measure. Target ≤ 10 KiB per
 *     socket. Baseline in the same run: a bare `node:http` + `ws` server (bare-socket-server.ts)
 *     holding the same number of sockets.
 * (b) Fan-out latency of `record_changed` to BENCH_WATCHERS (1,000) API-key sockets watching one
 *     contact (an API key's write excludes no socket), half on each of two FieldForge workers (two
 *     server processes sharing the database and a Redis server of the bench's own): from sending
 *     `PUT /api/update/Contact/<id>` to one worker (alternately) to each socket's frame, p50/p99
 *     over all sockets of all writes. Target p99 ≤ 50 ms. Baseline in the same run, rounds
 *     interleaved: two bare `ws` processes holding as many sockets, an HTTP request to one of them
 *     publishing the frame on Redis, each process sending it to its sockets (bare-socket-server.ts).
 * (c) Update throughput: BENCH_CONCURRENCY (10) loops, each `PUT /api/update/Contact/<own id>`
 *     (the notes change on every write), BENCH_SECONDS per round, against four FieldForge servers
 *     (Redis bus, each its own key prefix): realtime disabled (`BENCH_REALTIME=off`: no change
 *     feed at all), no watcher, the gate lit (one socket watches another contact), 100 sockets
 *     watching 100 other contacts. Rounds rotate the order; medians. Target: no watcher within
 *     5 % of realtime disabled.
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_CASES
 * (default a,b,c), BENCH_SOCKETS (10,000), BENCH_WATCHERS (1,000), BENCH_ROUNDS (5), BENCH_WRITES
 * (writes per round of (b), 4), BENCH_SECONDS (seconds per round of (c), 4), BENCH_CONCURRENCY
 * (10), BENCH_KEEP=1 (keep the database). Not a test: it prints figures and never fails CI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createConnection, createServer } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { WebSocket } from 'ws';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { BENCH_BASE_URL, createBenchDatabase } from './bench-database.js';
import { median } from './bench-measures.js';
import { memoryOf, startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';

const BASE_URL = BENCH_BASE_URL;
const SOCKETS = Math.max(1, Number(process.env.BENCH_SOCKETS ?? 10_000));
const CASES = (process.env.BENCH_CASES ?? 'a,b,c').split(',').map((c) => c.trim());
const WATCHERS = Math.max(2, Number(process.env.BENCH_WATCHERS ?? 1_000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const WRITES = Math.max(1, Number(process.env.BENCH_WRITES ?? 4));
const SECONDS = Math.max(1, Number(process.env.BENCH_SECONDS ?? 4));
/** Every socket of the bench is one API key's: the per-user and per-key socket limits are raised past them. */
const SOCKET_LIMITS = { FF_WS_MAX_SOCKETS_PER_USER: String(Math.max(SOCKETS, WATCHERS) + 100) };
const CONCURRENCY = Math.max(1, Number(process.env.BENCH_CONCURRENCY ?? 10));
const KEEP = process.env.BENCH_KEEP === '1';
/** Upgrades in flight at once while opening the sockets. */
const OPENING = 100;

const log = (msg: string) => process.stderr.write(`${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens one socket and resolves once its first frame (the hello) arrived. */
function openSocket(url: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    const timer = setTimeout(() => reject(new Error('no hello within 30 s')), 30_000);
    ws.once('message', () => {
      clearTimeout(timer);
      resolve(ws);
    });
    ws.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`upgrade answered ${res.statusCode}`));
    });
  });
}

async function openMany(n: number, url: string, headers: Record<string, string>): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i += OPENING) {
    sockets.push(...(await Promise.all(Array.from({ length: Math.min(OPENING, n - i) }, () => openSocket(url, headers)))));
  }
  return sockets;
}

async function settledRss(server: ServerProcess): Promise<number> {
  for (let i = 0; i < 2; i++) {
    await fetch(`http://127.0.0.1:${server.port}/__gc`, { method: 'POST' });
    await sleep(500);
  }
  return memoryOf(server.child.pid!).rss;
}

/** Resident KiB per socket of `server` with `n` idle sockets open, beyond the same server with none. */
async function perSocket(server: ServerProcess, url: string, headers: Record<string, string>): Promise<{ before: number; after: number; perSocketKiB: number; openSeconds: number }> {
  // Warm-up: one socket opened and closed, so code paths and caches are in place before the measure.
  (await openSocket(url, headers)).close();
  await sleep(300);
  const before = await settledRss(server);
  const start = performance.now();
  const sockets = await openMany(SOCKETS, url, headers);
  const openSeconds = (performance.now() - start) / 1000;
  await sleep(3_000);
  const after = await settledRss(server);
  for (const ws of sockets) ws.terminate();
  await sleep(500);
  return { before, after, perSocketKiB: (after - before) / SOCKETS, openSeconds };
}

/** A Redis server of the bench's own on a free port (no persistence), stopped at the end. */
async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port: p } = srv.address() as { port: number };
      srv.close(() => resolve(p));
    });
  });
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const accepts = () => new Promise<boolean>((resolve) => {
    const c = createConnection({ port, host: '127.0.0.1' });
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
  const deadline = Date.now() + 10_000;
  while (!(await accepts())) {
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await sleep(50);
  }
  return { url: `redis://127.0.0.1:${port}`, child };
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
}

/** Everything the cases share: the database, its API key, contacts to write and watch. */
interface Fixture {
  dbName: string;
  key: string;
  headers: Record<string, string>;
  contacts: number[];
}

async function api(port: number, key: string, dbName: string, method: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method, body: JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, 'x-db-name': dbName, 'content-type': 'application/json' },
  });
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Opens `n` sockets to a FieldForge server, each watching `target(i)`; resolves once all watches are sent. */
async function watchers(port: number, f: Fixture, n: number, target: (i: number) => number): Promise<WebSocket[]> {
  const sockets = await openMany(n, `ws://127.0.0.1:${port}/api/ws`, f.headers);
  sockets.forEach((ws, i) => ws.send(JSON.stringify({ type: 'watch', data: { model: 'Contact', id: target(i) } })));
  return sockets;
}

interface FanOut {
  latencies: number[];
  missed: number;
  writeMs: number[];
}

/** One write (or publish) and every socket's frame: per-socket latency from the send. */
async function fanOutOnce(sockets: WebSocket[], send: () => Promise<void>, m: FanOut): Promise<void> {
  const t0 = performance.now();
  let got = 0;
  const arrivals: number[] = [];
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 5_000);
    for (const ws of sockets) {
      ws.once('message', () => {
        arrivals.push(performance.now() - t0);
        if (++got === sockets.length) {
          clearTimeout(timer);
          resolve();
        }
      });
    }
  });
  await send();
  m.writeMs.push(performance.now() - t0);
  await done;
  for (const ws of sockets) ws.removeAllListeners('message');
  m.latencies.push(...arrivals);
  m.missed += sockets.length - got;
  await sleep(150);
}

async function caseB(f: Fixture, redisUrl: string, started: ServerProcess[]): Promise<{ ff: FanOut; bare: FanOut }> {
  const prefix = `ffbench${randomBytes(3).toString('hex')}:`;
  const ffs = [0, 1].map(() => startServerProcess('bench/fieldforge-server.ts', { DATABASE_URL: BASE_URL, BENCH_DB: f.dbName, REDIS_URL: redisUrl, FF_REDIS_PREFIX: prefix, ...SOCKET_LIMITS }));
  const bares = [0, 1].map(() => startServerProcess('bench/bare-socket-server.ts', { BENCH_TOKEN: 'bare', REDIS_URL: redisUrl, BENCH_CHANNEL: `${prefix}bare` }));
  const servers = await Promise.all([...ffs, ...bares]);
  started.push(...servers);
  const [ff1, ff2, bare1, bare2] = servers as [ServerProcess, ServerProcess, ServerProcess, ServerProcess];
  const target = f.contacts[0]!;
  const half = Math.floor(WATCHERS / 2);
  log(`(b) opening ${WATCHERS} watchers over 2 workers and ${WATCHERS} bare sockets over 2 processes…`);
  const ffSockets = [...(await watchers(ff1.port, f, half, () => target)), ...(await watchers(ff2.port, f, WATCHERS - half, () => target))];
  const bareSockets = [
    ...(await openMany(half, `ws://127.0.0.1:${bare1.port}/`, { authorization: 'Bearer bare' })),
    ...(await openMany(WATCHERS - half, `ws://127.0.0.1:${bare2.port}/`, { authorization: 'Bearer bare' })),
  ];
  // Past the stale-gate catch-up window (2.5 s after the gate lit) and its reads.
  await sleep(5_000);
  let n = 0;
  const ffWrite = async () => {
    const port = (n % 2 ? ff2 : ff1).port;
    await api(port, f.key, f.dbName, 'PUT', `/api/update/Contact/${target}`, { notes: `write ${++n}` });
  };
  const frame = JSON.stringify({
    type: 'activity_update',
    data: { kind: 'record_changed', model: 'Contact', id: target, fields: ['notes'], updated_by: { id: 2, display_name: 'realtime benchmark' }, updated_date: new Date().toISOString() },
  });
  let p = 0;
  const barePublish = async () => {
    const res = await fetch(`http://127.0.0.1:${(p++ % 2 ? bare2 : bare1).port}/__publish`, { method: 'POST', body: frame });
    await res.text();
  };
  const ff: FanOut = { latencies: [], missed: 0, writeMs: [] };
  const bare: FanOut = { latencies: [], missed: 0, writeMs: [] };
  const warm: FanOut = { latencies: [], missed: 0, writeMs: [] };
  for (let i = 0; i < 2; i++) {
    await fanOutOnce(ffSockets, ffWrite, warm);
    await fanOutOnce(bareSockets, barePublish, warm);
  }
  if (warm.missed) log(`(b) warm-up: ${warm.missed} frames missing`);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? ['bare', 'ff'] : ['ff', 'bare'];
    for (const which of order) {
      for (let w = 0; w < WRITES; w++) {
        if (which === 'ff') await fanOutOnce(ffSockets, ffWrite, ff);
        else await fanOutOnce(bareSockets, barePublish, bare);
      }
    }
  }
  for (const ws of [...ffSockets, ...bareSockets]) ws.terminate();
  for (const s of servers) await stopServerProcess(s);
  started.length = 0;
  return { ff, bare };
}

interface Throughput {
  label: string;
  env: Record<string, string>;
  server?: ServerProcess;
  sockets: WebSocket[];
  perSecond: number[];
  errors: number;
}

/** CONCURRENCY loops updating their own contact for `seconds`: writes per second answered 200. */
async function load(port: number, f: Fixture, ids: number[], seconds: number): Promise<{ perSecond: number; errors: number }> {
  const until = performance.now() + seconds * 1000;
  let ok = 0;
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(ids.map(async (id) => {
    let v = 0;
    while (performance.now() < until) {
      const res = await fetch(`http://127.0.0.1:${port}/api/update/Contact/${id}`, {
        method: 'PUT', body: JSON.stringify({ notes: `n${++v}` }),
        headers: { authorization: `Bearer ${f.key}`, 'x-db-name': f.dbName, 'content-type': 'application/json' },
      });
      await res.arrayBuffer();
      if (res.status === 200) ok++;
      else errors++;
    }
  }));
  return { perSecond: ok / ((performance.now() - t0) / 1000), errors };
}

async function caseC(f: Fixture, redisUrl: string, started: ServerProcess[]): Promise<Throughput[]> {
  const configs: Throughput[] = [
    { label: 'realtime disabled (no change feed)', env: { BENCH_REALTIME: 'off' }, sockets: [], perSecond: [], errors: 0 },
    { label: 'no watcher', env: {}, sockets: [], perSecond: [], errors: 0 },
    { label: 'gate lit (1 socket watches another contact)', env: {}, sockets: [], perSecond: [], errors: 0 },
    { label: '100 watchers of 100 other contacts', env: {}, sockets: [], perSecond: [], errors: 0 },
  ];
  const servers = await Promise.all(configs.map((c) => startServerProcess('bench/fieldforge-server.ts', {
    DATABASE_URL: BASE_URL, BENCH_DB: f.dbName, REDIS_URL: redisUrl, FF_REDIS_PREFIX: `ffbench${randomBytes(3).toString('hex')}:`, ...SOCKET_LIMITS, ...c.env,
  })));
  started.push(...servers);
  configs.forEach((c, i) => (c.server = servers[i]));
  // Contacts: [1..] written, one range per server; the watched ones after them.
  const written = (i: number) => f.contacts.slice(1 + i * CONCURRENCY, 1 + (i + 1) * CONCURRENCY);
  const watched = f.contacts.slice(1 + configs.length * CONCURRENCY);
  configs[2]!.sockets = await watchers(configs[2]!.server!.port, f, 1, () => watched[0]!);
  configs[3]!.sockets = await watchers(configs[3]!.server!.port, f, 100, (i) => watched[i]!);
  await sleep(5_000);
  log(`(c) warm-up, then ${ROUNDS} rounds of ${SECONDS} s per server…`);
  for (const [i, c] of configs.entries()) await load(c.server!.port, f, written(i), 2);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < configs.length; k++) {
      const i = (k + r) % configs.length;
      const c = configs[i]!;
      const run = await load(c.server!.port, f, written(i), SECONDS);
      c.perSecond.push(run.perSecond);
      c.errors += run.errors;
      await sleep(300);
    }
  }
  for (const c of configs) for (const ws of c.sockets) ws.terminate();
  for (const s of servers) await stopServerProcess(s);
  started.length = 0;
  return configs;
}

async function main(): Promise<void> {
  const dbName = `ffbench_realtime_${randomBytes(4).toString('hex')}`;
  const engine = new PostgresEngine({ url: BASE_URL });
  const started: ServerProcess[] = [];
  let redis: { url: string; child: ChildProcess } | null = null;
  const load0 = loadavg();
  const out: string[] = [];
  const print = (line: string) => {
    out.push(line);
    console.log(line);
  };
  try {
    log(`creating ${dbName} (contacts)…`);
    const key = await createBenchDatabase(engine, dbName, ['contacts'], 'realtime benchmark');
    const f: Fixture = { dbName, key, headers: { authorization: `Bearer ${key}`, 'x-db-name': dbName }, contacts: [] };
    print(`\nRealtime socket; ${availableParallelism()} CPUs, load average ${load0.map((l) => l.toFixed(1)).join(' ')} at the start.`);

    if (CASES.includes('a')) {
      const ff = await startServerProcess('bench/fieldforge-server.ts', { DATABASE_URL: BASE_URL, BENCH_DB: dbName, ...SOCKET_LIMITS }, ['--expose-gc']);
      started.push(ff);
      const ffRun = await perSocket(ff, `ws://127.0.0.1:${ff.port}/api/ws`, f.headers);
      await stopServerProcess(started.pop()!);
      const bare = await startServerProcess('bench/bare-socket-server.ts', { BENCH_TOKEN: 'bare' }, ['--expose-gc']);
      started.push(bare);
      const bareRun = await perSocket(bare, `ws://127.0.0.1:${bare.port}/`, { authorization: 'Bearer bare' });
      await stopServerProcess(started.pop()!);
      const kib = (n: number) => n.toFixed(1).padStart(6);
      const mib = (kb: number) => `${Math.round(kb / 1024)} MiB`;
      print(`\n(a) ${SOCKETS.toLocaleString('en')} idle sockets on one worker (RSS after a full GC, beyond the same server with none)`);
      print(`  FieldForge /api/ws        ${kib(ffRun.perSocketKiB)} KiB/socket   (${mib(ffRun.before)} → ${mib(ffRun.after)}; opened in ${ffRun.openSeconds.toFixed(1)} s)   target ≤ 10 KiB: ${ffRun.perSocketKiB <= 10 ? 'met' : 'MISSED'}`);
      print(`  bare node:http + ws       ${kib(bareRun.perSocketKiB)} KiB/socket   (${mib(bareRun.before)} → ${mib(bareRun.after)}; opened in ${bareRun.openSeconds.toFixed(1)} s)`);
      print(`  FieldForge / bare: ${(ffRun.perSocketKiB / bareRun.perSocketKiB).toFixed(2)}×   (load average now ${loadavg()[0]!.toFixed(1)})`);
    }

    if (CASES.includes('b') || CASES.includes('c')) {
      redis = await startRedis();
      // Contacts to write and watch, created through the API of a throwaway server.
      const seeder = await startServerProcess('bench/fieldforge-server.ts', { DATABASE_URL: BASE_URL, BENCH_DB: dbName });
      started.push(seeder);
      const needed = 1 + 4 * CONCURRENCY + 100;
      for (let i = 0; i < needed; i++) f.contacts.push((await api(seeder.port, key, dbName, 'POST', '/api/create/Contact', { name: `Contact ${i}` })).id as number);
      await stopServerProcess(started.pop()!);
    }

    if (CASES.includes('b')) {
      const { ff, bare } = await caseB(f, redis!.url, started);
      const ms = (x: number) => `${x.toFixed(1).padStart(6)} ms`;
      const line = (label: string, m: FanOut) => {
        const sorted = [...m.latencies].sort((x, y) => x - y);
        return `  ${label.padEnd(44)} p50 ${ms(quantile(sorted, 0.5))}   p99 ${ms(quantile(sorted, 0.99))}   max ${ms(sorted[sorted.length - 1] ?? NaN)}   request answered (median) ${ms(median(m.writeMs))}   frames missing: ${m.missed}`;
      };
      print(`\n(b) fan-out of one change to ${WATCHERS.toLocaleString('en')} sockets, half on each of 2 processes (${ROUNDS} interleaved rounds × ${WRITES} writes; per-socket latency from the request's send)`);
      print(line('FieldForge: PUT /api/update → record_changed', ff));
      print(line('bare: POST → Redis PUBLISH → 2 ws processes', bare));
      const p99 = quantile([...ff.latencies].sort((x, y) => x - y), 0.99);
      print(`  target p99 ≤ 50 ms: ${p99 <= 50 ? 'met' : 'MISSED'}   (load average now ${loadavg()[0]!.toFixed(1)})`);
    }

    if (CASES.includes('c')) {
      const configs = await caseC(f, redis!.url, started);
      const base = median(configs[0]!.perSecond);
      print(`\n(c) update throughput, ${CONCURRENCY} concurrent loops of PUT /api/update/Contact/<own id> (medians of ${ROUNDS} rotated rounds of ${SECONDS} s; Redis bus)`);
      for (const c of configs) {
        const m = median(c.perSecond);
        print(`  ${c.label.padEnd(44)} ${m.toFixed(0).padStart(6)} writes/s   ratio ${(m / base).toFixed(3)}   (rounds ${c.perSecond.map((x) => x.toFixed(0)).join(', ')}${c.errors ? `; ${c.errors} errors` : ''})`);
      }
      const none = median(configs[1]!.perSecond);
      print(`  target: no watcher within 5 % of realtime disabled: ${none >= 0.95 * base ? 'met' : 'MISSED'}   (load average now ${loadavg()[0]!.toFixed(1)})`);
    }
  } finally {
    for (const s of started) await stopServerProcess(s).catch(() => {});
    if (redis) await stopRedis(redis.child).catch(() => {});
    if (!KEEP) await engine.drop(dbName).then(() => log(`dropped ${dbName}`), (err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    await engine.close().catch(() => {});
  }
}

await main();
