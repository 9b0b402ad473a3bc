/**
 * The `fieldforge` command line, run as a real process (`node bin/fieldforge.js …`) against the
 * PostgreSQL server. Spawns that do not depend on each other run concurrently to keep the file short.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/auth/passwords.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { buildApp } from '../../src/http/app.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { Platform } from '../../src/platform/platform.js';
import { TEST_DATABASE_URL } from '../support/services.js';
import { runCli, type CliRun } from '../support/cli.js';

const GRAPH = fileURLToPath(new URL('../fixtures/addons-graph', import.meta.url));

type Run = CliRun;

let dataDir: string;

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runCli(args, { FF_DATA_DIR: dataDir, ...env });
}

const id = randomBytes(4).toString('hex');
const NAME = `fft_cli_${id}`;
const CLONE = `fft_cli_${id}_copy`;
const PASSWORD = `pw-${id}-secret`;

let engine: PostgresEngine;
let platform: Platform;
let app: FastifyInstance;
/** Started early, awaited by their own tests. */
let badName: Promise<Run>;
let manyWorkers: Promise<Run>;
let listed: Promise<Run>;
let missingDependency: Promise<Run>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-cli-'));
  engine = new PostgresEngine({ url: TEST_DATABASE_URL });
  platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  app = await buildApp(platform);
  badName = cli(['db', 'create', 'Bad-Name', '--admin-password', 'whatever-1234']);
  manyWorkers = cli(['serve', '--workers', '2', '--port', '1'], { DATABASE_URL: '', REDIS_URL: '' });
});
afterAll(async () => {
  await app?.close();
  for (const name of [NAME, CLONE]) if (await engine.exists(name)) await engine.drop(name);
  await platform?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function moduleStates(): Promise<Record<string, string>> {
  const db = await platform.database(NAME);
  const { rows } = await sql<{ identifier: string; state: string }>`SELECT identifier, state FROM module`.execute(db.executor);
  return Object.fromEntries(rows.map((r) => [r.identifier, r.state]));
}

describe('fieldforge CLI', () => {
  it('db create makes a database with the requested modules and prints the admin login', async () => {
    const run = await cli(['db', 'create', NAME, '--modules', 'contacts', '--admin-password', PASSWORD]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Admin login: admin@example.com / ${PASSWORD}`);
    // Later steps that only need the database to exist run meanwhile.
    listed = cli(['db', 'list']);
    missingDependency = cli(['-db', NAME, '--init', 'mod_g_missing'], { FF_ADDONS_PATH: GRAPH });
    expect(await moduleStates()).toEqual({ core: 'installed', contacts: 'installed' });
    const db = await platform.database(NAME);
    const { rows } = await sql<{ password_hash: string }>`SELECT password_hash FROM "user" WHERE email = 'admin@example.com'`.execute(db.executor);
    expect(await verifyPassword(rows[0]!.password_hash, PASSWORD)).toBe(true);
  });

  it('db list prints the new database', async () => {
    const run = await listed;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')).toContain(NAME);
  });

  it('-db NAME --init installs a module', async () => {
    const run = await cli(['-db', NAME, '--init', 'project']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('installed [messaging, project]');
    expect(await moduleStates()).toEqual({ core: 'installed', contacts: 'installed', messaging: 'installed', project: 'installed' });
    const db = await platform.database(NAME);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM project_stage WHERE identifier LIKE 'project.%'`.execute(db.executor);
    expect(rows[0]!.n).toBe(5);
  });

  it('-db NAME --update upgrades an installed module', async () => {
    const db = await platform.database(NAME);
    const read = async () => (await sql<{ v: number }>`SELECT registry_version AS v FROM ff_state`.execute(db.executor)).rows[0]!.v;
    const version = await read();
    await sql`UPDATE project_stage SET name = 'Renamed' WHERE identifier = 'project.stage_new'`.execute(db.executor);
    const run = await cli(['-db', NAME, '--update', 'project']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('upgraded [project]');
    expect(await read()).toBe(version + 1);
    // The data reload restored the record from the module's file.
    const { rows } = await sql<{ name: string }>`SELECT name FROM project_stage WHERE identifier = 'project.stage_new'`.execute(db.executor);
    expect(rows).toEqual([{ name: 'New' }]);
  });

  it('apikey create prints a working key alone on the last line', async () => {
    const run = await cli(['apikey', 'create', '-db', NAME, '--name', 'bot', '--groups', 'core.group_admin']);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const key = lines.at(-1)!;
    expect(key).toMatch(/^ff_[A-Za-z0-9_-]{43}$/);
    expect(lines.slice(0, -1).join('\n')).not.toContain(key);
    const ask = (credential: string) => app.inject({
      method: 'POST', url: '/api/query/ProjectStage',
      headers: { authorization: `Bearer ${credential}`, 'x-db-name': NAME, 'content-type': 'application/json' },
      payload: JSON.stringify({ fields: ['name'], order_by: ['sequence ASC'] }),
    });
    const ok = await ask(key);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().map((s: { name: string }) => s.name)).toEqual(['New', 'In Progress', 'Review', 'Done', 'Cancelled']);
    const madeUp = await ask(`ff_${randomBytes(32).toString('base64url')}`);
    expect(madeUp.statusCode).toBe(401);
  });

  it('exits non-zero with a clear message for an invalid database name', async () => {
    const run = await badName;
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('Invalid database name "Bad-Name"');
    expect(await engine.list()).not.toContain('Bad-Name');
  });

  it('exits non-zero naming both modules when --init meets a missing dependency', async () => {
    const run = await missingDependency;
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('mod_g_missing');
    expect(run.stderr).toContain('mod_g_nowhere');
    expect(await moduleStates()).not.toHaveProperty('mod_g_missing');
  });

  it('refuses serve --workers 2 without DATABASE_URL and REDIS_URL, naming both', async () => {
    const run = await manyWorkers;
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('DATABASE_URL and REDIS_URL');
  });

  it('db clone copies a database and db drop removes both', async () => {
    // Our own idle connections to the source would block CREATE DATABASE … TEMPLATE.
    platform.forget(NAME);
    await engine.closeDatabase(NAME);
    // It loads the engine and the file store (with the environment and the system tables' SQL
    // they use), nothing of the ORM, the modules, the HTTP server or the platform above them.
    const importLog = join(tmpdir(), `ff-clone-imports-${process.pid}.txt`);
    const cloned = await cli(['db', 'clone', NAME, CLONE], {
      NODE_OPTIONS: `--import ${pathToFileURL(fileURLToPath(new URL('../support/record-imports.mjs', import.meta.url))).href}`,
      FF_TEST_IMPORT_LOG: importLog,
    });
    expect(cloned.code, cloned.stderr).toBe(0);
    const loaded = readFileSync(importLog, 'utf8').split('\n').filter((url) => /\/src\//.test(url));
    rmSync(importLog, { force: true });
    expect(loaded.some((url) => url.includes('/src/platform/clone-database.'))).toBe(true);
    const above = /\/src\/(http|realtime|modules|api|access|auth|reports)\/|\/src\/platform\/(platform|boot|database-lifecycle)\.|\/src\/orm\/(?!env\.|system\/)/;
    expect(loaded.filter((url) => above.test(url))).toEqual([]);
    const copy = await platform.database(CLONE);
    const { rows } = await sql<{ identifier: string }>`SELECT identifier FROM module ORDER BY identifier`.execute(copy.executor);
    expect(rows.map((r) => r.identifier)).toEqual(['contacts', 'core', 'messaging', 'project']);
    await engine.closeDatabase(CLONE);
    const drops = await Promise.all([cli(['db', 'drop', NAME]), cli(['db', 'drop', CLONE])]);
    for (const run of drops) expect(run.code, run.stderr).toBe(0);
    const names = await engine.list();
    expect(names).not.toContain(NAME);
    expect(names).not.toContain(CLONE);
  });
});
