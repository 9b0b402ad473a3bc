/**
 * `BENCH_ONLY=realtime npm run bench`: the realtime socket (issue 14 item 8).
 *
 * (a) 10,000 idle sockets on one FieldForge worker (`GET /api/ws`, an API key, the hello frame
 *     received on each): the server's resident memory per socket beyond the same server with no
 *     socket, after a full garbage collection on both sides of the measure. Target ≤ 10 KiB per
 *     socket. Baseline in the same run: a bare `node:http` + `ws` server (bare-socket-server.ts)
 *     holding the same number of sockets.
 *
 * Environment: BENCH_DATABASE_URL (else DATABASE_URL, else the local server), BENCH_SOCKETS
 * (default 10,000), BENCH_KEEP=1 (keep the database). Not a test: it prints figures and never
 * fails CI.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { WebSocket } from 'ws';
import { createServiceAccountKey } from '../src/auth/api-keys.js';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { createDatabase } from '../src/platform/database-lifecycle.js';
import { Platform } from '../src/platform/platform.js';
import { memoryOf, startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';

const BASE_URL = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SOCKETS = Math.max(1, Number(process.env.BENCH_SOCKETS ?? 10_000));
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

async function main(): Promise<void> {
  const dbName = `ffbench_realtime_${randomBytes(4).toString('hex')}`;
  const engine = new PostgresEngine({ url: BASE_URL });
  let ff: ServerProcess | null = null;
  let bare: ServerProcess | null = null;
  try {
    log(`creating ${dbName} (contacts)…`);
    const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
    await createDatabase(platform, dbName, { modules: ['contacts'] });
    const { key } = await platform.run(dbName, {}, () => createServiceAccountKey({ name: 'realtime benchmark', groups: ['core.group_user'] }));
    platform.forget(dbName);
    await engine.closeDatabase(dbName);

    ff = await startServerProcess('bench/fieldforge-server.ts', { DATABASE_URL: BASE_URL, BENCH_DB: dbName }, ['--expose-gc']);
    const ffRun = await perSocket(ff, `ws://127.0.0.1:${ff.port}/api/ws`, { authorization: `Bearer ${key}`, 'x-db-name': dbName });
    await stopServerProcess(ff);
    ff = null;
    bare = await startServerProcess('bench/bare-socket-server.ts', { BENCH_TOKEN: 'bare' }, ['--expose-gc']);
    const bareRun = await perSocket(bare, `ws://127.0.0.1:${bare.port}/`, { authorization: 'Bearer bare' });

    const kib = (n: number) => n.toFixed(1).padStart(6);
    const mib = (kb: number) => `${Math.round(kb / 1024)} MiB`;
    console.log(`\nRealtime socket; ${availableParallelism()} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}.`);
    console.log(`\n(a) ${SOCKETS.toLocaleString('en')} idle sockets on one worker (RSS after a full GC, beyond the same server with none)`);
    console.log(`  FieldForge /api/ws        ${kib(ffRun.perSocketKiB)} KiB/socket   (${mib(ffRun.before)} → ${mib(ffRun.after)}; opened in ${ffRun.openSeconds.toFixed(1)} s)   target ≤ 10 KiB: ${ffRun.perSocketKiB <= 10 ? 'met' : 'MISSED'}`);
    console.log(`  bare node:http + ws       ${kib(bareRun.perSocketKiB)} KiB/socket   (${mib(bareRun.before)} → ${mib(bareRun.after)}; opened in ${bareRun.openSeconds.toFixed(1)} s)`);
    console.log(`  FieldForge / bare: ${(ffRun.perSocketKiB / bareRun.perSocketKiB).toFixed(2)}×`);
  } finally {
    if (ff) await stopServerProcess(ff).catch(() => {});
    if (bare) await stopServerProcess(bare).catch(() => {});
    if (!KEEP) await engine.drop(dbName).then(() => log(`dropped ${dbName}`), (err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    await engine.close().catch(() => {});
  }
}

await main();
