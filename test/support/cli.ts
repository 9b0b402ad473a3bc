/**
 * Runs the real `fieldforge` command line as a child process against the test PostgreSQL, the way
 * an operator would, with `env` over the test's environment (`FF_ADDONS_PATH` left out).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_DATABASE_URL } from './services.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `signal` stops the process (SIGTERM) and rejects: for a command that must end by itself. */
export function runCli(args: readonly string[], env: Record<string, string>, signal?: AbortSignal): Promise<CliRun> {
  const { FF_ADDONS_PATH: _ignored, ...inherited } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/fieldforge.js', ...args], {
      cwd: ROOT,
      env: { ...inherited, DATABASE_URL: TEST_DATABASE_URL, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      signal,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
