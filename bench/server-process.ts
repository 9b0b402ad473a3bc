/**
 * Benchmark servers in processes of their own: started with `node --import tsx <script>` (the
 * script prints `{"ready":true,"port":…}` once listening), stopped with SIGTERM (SIGKILL after
 * 3 s), and their memory read from /proc (Linux).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  port: number;
}

/**
 * How `fieldforge` runs node: the variables and flags of its shebang (`#!/usr/bin/env -S
 * MALLOC_ARENA_MAX=2 node --max-semi-space-size=4`), which `npm start` repeats. The benches'
 * FieldForge server gets them too, so it is measured as people run it; BENCH_FF_NODE_ARGS replaces
 * the flags (`BENCH_FF_NODE_ARGS=' '` for none), and BENCH_BASELINE_NODE_ARGS those of an A/B's
 * baseline (`startBaselineFieldforge`), so two sets of flags can be compared on one build.
 */
export function fieldforgeLaunch(override = process.env.BENCH_FF_NODE_ARGS): { flags: string[]; env: Record<string, string> } {
  const shebang = readFileSync(join(ROOT, 'bin', 'fieldforge.js'), 'utf8').split('\n', 1)[0]!.split(/\s+/);
  const env = Object.fromEntries(shebang.filter((word) => /^[A-Z_]+=/.test(word)).map((word) => word.split('=', 2) as [string, string]));
  const flags = override !== undefined ? override.split(/\s+/).filter(Boolean) : shebang.filter((word) => word.startsWith('--'));
  return { flags, env };
}

/**
 * Starts `script` (a path from the repository root, or from `root`: another checkout) and waits
 * for its ready line. FieldForge's bench server runs as `fieldforgeLaunch()` says, its flags before
 * `nodeArgs`.
 */
export async function startServerProcess(
  script: string, env: Record<string, string>, nodeArgs: string[] = [], root = ROOT, flags = process.env.BENCH_FF_NODE_ARGS,
): Promise<ServerProcess> {
  const label = script.replace(/^bench\/|\.ts$/g, '');
  const launch = script === 'bench/fieldforge-server.ts' ? fieldforgeLaunch(flags) : { flags: [], env: {} };
  const child = spawn(process.execPath, [...launch.flags, ...nodeArgs, '--import', 'tsx', script], {
    cwd: root, env: { ...process.env, ...launch.env, PORT: '0', NODE_ENV: 'production', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(`[${label}] ${d}`));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${label} did not start within 60 s`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code} before listening`));
    });
  });
  return { child, port };
}

export async function stopServerProcess(server: ServerProcess): Promise<void> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

/** A process's resident set now and its peak so far, in KiB. */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/**
 * Resets a process's peak resident set (VmHWM) to its current one, so a later reading is the peak
 * since now (Linux 4.0+, our own processes). Answers false where that is refused.
 */
export function resetPeakMemory(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
