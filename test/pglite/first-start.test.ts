/**
 * `npm start`'s first-start path on the embedded default: `fieldforge serve` with an empty data
 * directory and no DATABASE_URL creates database `main`, prints the admin login once, serves
 * HTTP, and shuts down cleanly on SIGTERM; a second start finds `main` and prints no login.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let dataDir: string;
const children: ChildProcess[] = [];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

interface Server {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `fieldforge serve` and resolves once it prints its "serving" line. */
async function startServer(): Promise<Server> {
  const port = await freePort();
  const { DATABASE_URL: _d, FF_ADDONS_PATH: _a, FF_ADMIN_PASSWORD: _p, ...env } = process.env;
  const child = spawn(process.execPath, ['bin/fieldforge.js', 'serve', '--port', String(port)], {
    cwd: ROOT, env: { ...env, FF_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "serving" line within 90 s:\n${out}`)), 90_000);
    const check = () => {
      if (/serving on http:\/\//.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before serving:\n${out}`));
    });
  });
  return { child, port, output: () => out, exited };
}

async function stop(server: Server): Promise<number | null> {
  server.child.kill('SIGTERM');
  return server.exited;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-first-start-'));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

describe('first start on the embedded default', () => {
  it('creates database main, prints the admin login, serves /health and stops cleanly', async () => {
    const server = await startServer();
    const out = server.output();
    expect(out).toContain("Created database 'main'");
    const login = /Admin login: (\S+) \/ (\S+)/.exec(out);
    expect(login, out).not.toBeNull();
    expect(login![1]).toBe('admin@example.com');
    expect(login![2]!.length).toBeGreaterThanOrEqual(12);
    expect(out).toContain('(pglite)');
    const res = await fetch(`http://127.0.0.1:${server.port}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    // Only one database, so the API selects it without X-DB-NAME; no credential → 401.
    const api = await fetch(`http://127.0.0.1:${server.port}/api/query/Company`, { method: 'POST' });
    expect(api.status).toBe(401);
    expect(existsSync(join(dataDir, 'databases', 'main'))).toBe(true);
    expect(await stop(server)).toBe(0);
    // A clean shutdown releases PGlite's lock file.
    expect(existsSync(join(dataDir, 'databases', 'main.lock'))).toBe(false);
  });

  it('does not create a database or print a login on the next start', async () => {
    const server = await startServer();
    expect(server.output()).not.toContain('Admin login');
    expect((await fetch(`http://127.0.0.1:${server.port}/health`)).status).toBe(200);
    expect(await stop(server)).toBe(0);
  });
});
