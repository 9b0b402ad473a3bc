/**
 * FieldForge as the benchmark runs it: the platform booted from the environment (DATABASE_URL,
 * FF_DB_POOL_MAX…) exactly as `fieldforge serve` does, the app from `buildApp`, plus a few routes
 * of the benchmark's own, outside `/api/` (so they skip the credential check):
 *
 * - `GET /__cpu`: this process's CPU time (process.cpuUsage), the number of SQL statements the
 *   benchmark database (BENCH_DB) has executed and the number of `/api/` requests received so far;
 * - `POST /__trace/start`, `POST /__trace/stop`: the SQL text of the statements run in between;
 * - `GET /__memory`: this process's `process.memoryUsage()` (where its resident memory goes);
 * - `POST /__gc`: a full garbage collection when started with `--expose-gc`;
 * - `POST /__heap`: writes a V8 heap snapshot to the temporary directory and answers its path
 *   (what a socket retains, `realtime-bench.ts`);
 * - `POST /__prof/start`, `POST /__prof/stop`: a V8 CPU profile of the time in between (in-process
 *   inspector), returned as JSON;
 * - with BENCH_SLOW_MS, each `/api/` request slower than that reported on stderr: its statements'
 *   times and the garbage collections meanwhile.
 *
 * `BENCH_REALTIME=off` builds the platform as usual and then takes its record-changed feed away
 * (`platform.changeFeed = null`, as `ui-effect`'s read-only work runs): the write path then does
 * no realtime work at all, not even the gate check — the baseline of `realtime-bench.ts` (c).
 *
 * Started by bench/run.ts with `node --import tsx`; PORT=0 picks a free port, which is printed as
 * `{"ready":true,"port":…}`. The platform itself runs compiled, as `fieldforge serve` runs it
 * (dist/, built first if stale); BENCH_SOURCES=1 runs its TypeScript sources instead.
 */
import { spawnSync } from 'node:child_process';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as AppModule from '../src/http/app.js';
import type * as BootModule from '../src/platform/boot.js';
import type * as SettingsModule from '../src/config/settings.js';
import type { Platform } from '../src/platform/platform.js';

// The platform as `fieldforge serve` runs it: compiled (dist/, `npm run build`) when that is up to
// date, so the CPU measured is that of the code people run; else the sources through tsx.
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { isFresh } = (await import(pathToFileURL(join(ROOT, 'bin', 'build-stamp.js')).href)) as { isFresh(root: string): boolean };
if (process.env.BENCH_SOURCES !== '1' && !isFresh(ROOT)) spawnSync(process.execPath, ['bin/build.js'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
const compiled = process.env.BENCH_SOURCES !== '1' && isFresh(ROOT);
process.stderr.write(`platform ${compiled ? 'compiled (dist/)' : 'from its TypeScript sources'}\n`);
const platformFile = (path: string) => pathToFileURL(join(ROOT, compiled ? `dist/src/${path}.js` : `src/${path}.ts`)).href;
const { readSettings } = (await import(platformFile('config/settings'))) as typeof SettingsModule;
const { buildApp } = (await import(platformFile('http/app'))) as typeof AppModule;
const { bootPlatform } = (await import(platformFile('platform/boot'))) as typeof BootModule;

const dbName = process.env.BENCH_DB;
if (!dbName) throw new Error('BENCH_DB is not set');
const settings = readSettings();
if (!settings.databaseUrl) throw new Error('DATABASE_URL is not set');

const platform = await bootPlatform(settings);
if (process.env.BENCH_REALTIME === 'off') (platform as { changeFeed: Platform['changeFeed'] | null }).changeFeed = null;
const app = await buildApp(platform, { dev: false, bodyLimit: settings.bodyLimit, logger: false, realtime: settings.socket });

// Counted as they arrive: a request whose client hung up is still worked on (and would be
// missing from an onResponse count). The runner reads this only when no request is in flight.
let served = 0;
app.addHook('onRequest', (req, _reply, done) => {
  if (req.url.startsWith('/api/')) served++;
  done();
});
// BENCH_SLOW_MS: each /api/ request slower than that is reported on stderr with what its time went
// to — its statements (as the database listener times them) and the garbage collections meanwhile.
const slowMs = Number(process.env.BENCH_SLOW_MS ?? 0);
if (slowMs > 0) {
  const { PerformanceObserver, performance } = await import('node:perf_hooks');
  const gcs: { start: number; ms: number }[] = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, ms: e.duration });
    if (gcs.length > 1_000) gcs.splice(0, gcs.length - 1_000);
  }).observe({ entryTypes: ['gc'] });
  const database = await platform.database(dbName);
  const timed = new WeakMap<object, { at: number; statements: string[]; off: () => void }>();
  app.addHook('onRequest', (req, _reply, done) => {
    if (req.url.startsWith('/api/')) {
      const statements: string[] = [];
      const off = database.onStatement((sql, detail) => statements.push(`${(detail?.durationMs ?? NaN).toFixed(1)} ${sql.replace(/\s+/g, ' ').slice(0, 50)}`));
      timed.set(req, { at: performance.now(), statements, off });
    }
    done();
  });
  app.addHook('onResponse', (req, _reply, done) => {
    const t = timed.get(req);
    if (t) {
      t.off();
      const ms = performance.now() - t.at;
      if (ms > slowMs) {
        const gc = gcs.filter((g) => g.start >= t.at).reduce((sum, g) => sum + g.ms, 0);
        process.stderr.write(`slow ${req.url} ${ms.toFixed(1)} ms, gc ${gc.toFixed(1)} ms, statements: ${t.statements.join(' | ')}\n`);
      }
    }
    done();
  });
}

app.get('/__cpu', async () => {
  const db = await platform.database(dbName);
  return { ...process.cpuUsage(), statements: db.statementCount, served };
});

app.get('/__memory', async () => process.memoryUsage());

let trace: { statements: string[]; off: () => void } | null = null;
app.post('/__trace/start', async () => {
  trace?.off();
  const db = await platform.database(dbName);
  const statements: string[] = [];
  trace = { statements, off: db.onStatement((s) => statements.push(s)) };
  return { ok: true };
});
app.post('/__trace/stop', async () => {
  const statements = trace?.statements ?? [];
  trace?.off();
  trace = null;
  return { statements };
});

let session: Session | null = null;
function post<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    session!.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T)));
  });
}
// A full collection, so resident memory can be compared (the bench starts this with --expose-gc).
app.post('/__gc', async () => {
  (globalThis as { gc?: () => void }).gc?.();
  return { ok: true };
});
app.post('/__heap', async () => {
  (globalThis as { gc?: () => void }).gc?.();
  return { path: writeHeapSnapshot(join(tmpdir(), `ff-bench-${process.pid}-${Date.now()}.heapsnapshot`)) };
});
app.post('/__prof/start', async () => {
  if (!session) {
    session = new Session();
    session.connect();
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 200 });
  }
  await post('Profiler.start');
  return { ok: true };
});
app.post('/__prof/stop', async () => {
  const { profile } = await post<{ profile: unknown }>('Profiler.stop');
  return profile;
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const address = app.server.address();
console.log(JSON.stringify({ ready: true, port: typeof address === 'object' && address ? address.port : 0, compiled }));

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  session?.disconnect();
  await app.close().catch(() => {});
  await platform.close().catch(() => {});
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
