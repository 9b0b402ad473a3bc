/**
 * `fieldforge serve` opens no database at start (issue 15): a real server on the PostgreSQL test
 * server, among every database the cluster holds, has no connection to ours once it says it is
 * serving. What a start used to do for every database — clear the install flag of an installer
 * that died, apply the modules marked in Settings > Modules — is done for a database when the
 * server first opens it, once, before its first requests are served: concurrent first requests
 * all find the marked module installed, and the lines saying so are printed once. A database no
 * request names is never opened, its stale flag left for the request that will; neither the
 * primary nor the workers of `serve --workers 2` open one at start either.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPlatformState, setInstalling } from '../../src/db/platform-state.js';
import { sql } from '../../src/db/sql-fragment.js';
import { TestRedis } from '../support/redis-server.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { testDatabase, type TestDatabase } from '../support/test-database.js';
import { waitForChild } from '../support/child-output.js';
import { freePort } from '../support/redis-server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let marked: TestDatabase;
let untouched: TestDatabase;
let admin: pg.Client;
let dataDir: string;
let child: ChildProcess | undefined;
let output = '';
let port: number;

const waitFor = (what: () => boolean, label: string, ms?: number) => waitForChild(() => child, () => output, what, label, ms);

/** Sessions on `name` of anyone but this test (which holds none on it while this is asked). */
async function sessionsOn(name: string): Promise<number> {
  const { rows: [row] } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
  return row!.n;
}

/** Lets go of the test's own connections to `t`: only the server's are left to count. */
async function release(t: TestDatabase): Promise<void> {
  t.platform.forget(t.name);
  await t.engine.closeDatabase(t.name);
}

const count = (text: string) => output.split(text).length - 1;

/** The node flags `fieldforge` and `npm start` run with (bin/fieldforge.js, docs/decisions.md). */
const NODE_FLAGS = ['--max-semi-space-size=4', '--single-threaded-gc'];

/** A process's command line, from /proc. */
async function commandLine(pid: number): Promise<string[]> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
}

/** The processes whose parent is `pid`, from /proc. */
async function childrenOf(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) found.push(Number(entry));
  }
  return found;
}

beforeAll(async () => {
  [marked, untouched] = await Promise.all([testDatabase('full'), testDatabase('core')]);
  // Sales marked for install in Settings > Modules; both left with the flag of a dead installer.
  const mark = await marked.api('POST', '/api/modules/sales/install');
  expect(mark.statusCode, mark.body).toBe(200);
  for (const t of [marked, untouched]) await setInstalling((await t.platform.database(t.name)).executor, true);
  await Promise.all([release(marked), release(untouched)]);
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  dataDir = await mkdtemp(join(tmpdir(), 'ff-lazy-open-'));
  port = await freePort();
  const { FF_DEV: _dev, FF_ADDONS_PATH: _addons, ...inherited } = process.env;
  // Run as `npx fieldforge` and npm's bin link run it: the file itself, through its shebang.
  child = spawn(join(ROOT, 'bin', 'fieldforge.js'), ['serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: ROOT,
    env: { ...inherited, DATABASE_URL: TEST_DATABASE_URL, FF_DATA_DIR: dataDir, FF_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await waitFor(() => /serving on http:\/\//.test(output), 'the "serving" line');
});
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await admin?.end();
  await Promise.all([marked?.close(), untouched?.close()]);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('serve with many databases in the cluster', () => {
  it('runs, as `npx fieldforge` and `npm start` do, with the young generation and the malloc arenas bounded, and one GC thread', async () => {
    // The shebang runs node with the flag: the serving process's own command line carries it.
    const line = await commandLine(child!.pid!);
    expect(line[0]).toMatch(/node$/);
    for (const flag of NODE_FLAGS) expect(line).toContain(flag);
    // And glibc's malloc arenas bounded, from the same shebang.
    const environment = (await readFile(`/proc/${child!.pid!}/environ`, 'utf8')).split('\0');
    expect(environment).toContain('MALLOC_ARENA_MAX=2');
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    expect(pkg.scripts.start).toBe(`MALLOC_ARENA_MAX=2 node ${NODE_FLAGS.join(' ')} bin/fieldforge.js serve`);
  });

  it('opens none of them at start and leaves their flags and marks alone', async () => {
    expect(await sessionsOn(marked.name)).toBe(0);
    expect(await sessionsOn(untouched.name)).toBe(0);
    expect(output).not.toContain('cleared the install flag');
    expect(output).not.toContain('as marked in Settings > Modules');
  });

  it('checks a database once when its first requests come, before serving them', async () => {
    const ask = () => fetch(`http://127.0.0.1:${port}/api/query/SaleOrder`, {
      method: 'POST',
      headers: { authorization: `Bearer ${marked.apiKey}`, 'x-db-name': marked.name, 'content-type': 'application/json' },
      body: JSON.stringify({ fields: ['name'] }),
    });
    // Sales exists only once the mark is applied; the stale flag would answer 503 before.
    const answers = await Promise.all([ask(), ask(), ask()]);
    for (const res of answers) expect(res.status, await res.text()).toBe(200);
    expect(count(`Database '${marked.name}': cleared the install flag of an installer that died`)).toBe(1);
    expect(count(`Database '${marked.name}': installed [sales], upgraded [] as marked in Settings > Modules`)).toBe(1);
    // Opened once: later requests do not check again.
    expect((await ask()).status).toBe(200);
    expect(count(`Database '${marked.name}': installed [sales]`)).toBe(1);

    const db = await marked.platform.database(marked.name);
    expect((await readPlatformState(db.executor)).installing).toBe(false);
    const { rows } = await sql`SELECT state, pending FROM module WHERE identifier = ${'sales'}`.execute(db.executor);
    expect(rows).toEqual([{ state: 'installed', pending: null }]);
  }, 120_000);

  it('opens none with --workers 2 either, in the primary or the workers', async () => {
    const redis = await TestRedis.start();
    const workersPort = await freePort();
    let out = '';
    const { FF_DEV: _dev, FF_ADDONS_PATH: _addons, ...inherited } = process.env;
    const workers = spawn(join(ROOT, 'bin', 'fieldforge.js'), ['serve', '--workers', '2', '--port', String(workersPort), '--host', '127.0.0.1'], {
      cwd: ROOT,
      detached: true, // its own process group: the primary and both workers are stopped together
      env: { ...inherited, DATABASE_URL: TEST_DATABASE_URL, REDIS_URL: redis.url, FF_REDIS_PREFIX: 'fflazy:', FF_DATA_DIR: dataDir, FF_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    workers.stdout!.on('data', (d) => (out += d));
    workers.stderr!.on('data', (d) => (out += d));
    try {
      const until = Date.now() + 90_000;
      while ((out.match(/serving on http:\/\//g) ?? []).length < 2) {
        if (Date.now() > until || workers.exitCode !== null) throw new Error(`two "serving" lines not seen:\n${out}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await sessionsOn(untouched.name)).toBe(0);
      expect(out).not.toContain(untouched.name);
      // The workers run with the primary's node flags (the shebang's young generation and GC).
      // Node children only: run from its sources, the primary also has tsx's esbuild service.
      const forked: number[] = [];
      for (const pid of await childrenOf(workers.pid!)) if ((await commandLine(pid))[0]?.endsWith('node')) forked.push(pid);
      expect(forked).toHaveLength(2);
      for (const pid of forked) for (const flag of NODE_FLAGS) expect(await commandLine(pid)).toContain(flag);
    } finally {
      const exited = new Promise((resolve) => workers.once('exit', resolve));
      process.kill(-workers.pid!, 'SIGKILL');
      await exited;
      await redis.stop();
    }
  }, 120_000);

  it('never opens a database no request names', async () => {
    expect(await sessionsOn(untouched.name)).toBe(0);
    expect(output).not.toContain(untouched.name);
    const db = await untouched.platform.database(untouched.name);
    expect((await readPlatformState(db.executor)).installing).toBe(true);
    await setInstalling(db.executor, false);
  });
});
