/**
 * The memory of FieldForge as people run it: the real `fieldforge serve` (bin/fieldforge.js,
 * compiled at install — rebuilt here first if the sources changed since), not the bench's own
 * server (which runs the TypeScript through tsx and carries bench routes). Used by
 * `ceiling-bench.ts` for issue 15's memory targets:
 *
 * - idle: resident set `idleSeconds` after one request of every shape (V8 hands memory back
 *   only after some idle time, so a reading right after the last answer overstates it);
 * - under load: the peak resident set (VmHWM, reset after the idle reading) while the shapes run
 *   one after the other, `loadSeconds` each, with the bench's connection count.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon, { type AutocannonRequest } from 'autocannon';
import { freePort } from '../test/support/redis-server.js';
import { CONNECTIONS, log } from './api-load.js';
import { memoryOf, resetPeakMemory } from './server-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServeMemory {
  /** KiB. */
  idle: number;
  /** KiB; null when the peak could not be reset after the idle reading. */
  peakUnderLoad: number | null;
  /** Whether the compiled CLI ran (false: the sources through tsx, e.g. no TypeScript to build with). */
  compiled: boolean;
  requests: number;
}

export async function measureServeMemory(options: {
  env: Record<string, string>;
  /** One request of each shape (and key) before the idle reading. */
  warm: AutocannonRequest[];
  /** The load: each request in turn, `loadSeconds` each. */
  load: AutocannonRequest[];
  idleSeconds?: number;
  loadSeconds?: number;
}): Promise<ServeMemory> {
  spawnSync(process.execPath, ['bin/build.js'], { cwd: ROOT, stdio: 'inherit' });
  const { isFresh } = (await import(pathToFileURL(join(ROOT, 'bin', 'build-stamp.js')).href)) as { isFresh(root: string): boolean };
  const compiled = isFresh(ROOT);
  const port = await freePort();
  // Run as `npx fieldforge` and the npm bin link run it: the file itself, with its shebang's node flags.
  const child = spawn(join(ROOT, 'bin', 'fieldforge.js'), ['serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT, env: { ...process.env, NODE_ENV: 'production', ...options.env }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(`[serve] ${d}`));
  try {
    await listening(child, port);
    const url = `http://127.0.0.1:${port}`;
    let requests = 0;
    for (const request of options.warm) {
      const res = await fetch(`${url}${request.path}`, { method: request.method, headers: request.headers, body: request.body as string });
      if (res.status !== 200) throw new Error(`serve answered ${res.status} to ${request.path}: ${await res.text()}`);
      requests++;
    }
    await new Promise((resolve) => setTimeout(resolve, (options.idleSeconds ?? 30) * 1000));
    const idle = memoryOf(child.pid!).rss;
    const reset = resetPeakMemory(child.pid!);
    for (const request of options.load) {
      const result = await autocannon({ url, connections: CONNECTIONS, duration: options.loadSeconds ?? 4, requests: [request] });
      if (result.non2xx || result.errors) log(`  serve: ${result.non2xx} non-2xx answers, ${result.errors} errors on ${request.path}`);
      requests += result['2xx'];
    }
    return { idle, peakUnderLoad: reset ? memoryOf(child.pid!).hwm : null, compiled, requests };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

async function listening(child: ChildProcess, port: number): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode} before listening`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return;
    } catch { /* not yet */ }
    if (Date.now() > until) throw new Error('serve did not listen within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
