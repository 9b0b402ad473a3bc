/**
 * Every path that sets a password applies the API's password rule (issue 10 §10): `fieldforge db
 * create --admin-password`, `FF_ADMIN_PASSWORD` (for `db create` and for `serve`'s first
 * database) and `createDatabase` itself refuse a short password or the e-mail with a clear message
 * and exit code 2, before any database exists; the generated password passes the rule.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPasswordRule } from '../../src/auth/password-rule.js';
import { generatePassword } from '../../src/auth/passwords.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { ValidationError } from '../../src/errors.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../../src/modules/module-catalog.js';
import { createDatabase } from '../../src/platform/database-lifecycle.js';
import { Platform } from '../../src/platform/platform.js';
import { runCli, type CliRun } from '../support/cli.js';
import { TEST_DATABASE_URL } from '../support/services.js';

const NAME = `fft_pw_${randomBytes(4).toString('hex')}`;

let dataDir: string;
let engine: PostgresEngine;
let platform: Platform;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-admin-password-'));
  engine = new PostgresEngine({ url: TEST_DATABASE_URL });
  platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
});
afterAll(async () => {
  if (await engine.exists(NAME)) await engine.drop(NAME);
  await platform?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** `runCli`, but a server that starts anyway (the bug) is stopped after `ms` instead of running on. */
async function runCliWithin(ms: number, args: string[], env: Record<string, string>): Promise<CliRun> {
  const stopped = new AbortController();
  const timer = setTimeout(() => stopped.abort(), ms);
  try {
    return await runCli(args, env, stopped.signal);
  } finally {
    clearTimeout(timer);
  }
}

describe('fieldforge db create', () => {
  it('refuses a short password, the e-mail and its local part with the rule\'s message and exit code 2', async () => {
    const cases: [string[], RegExp][] = [
      [['--admin-password', 'short'], /at least 12 characters/],
      [['--admin-password', 'admin@example.com'], /must not be the e-mail address/],
      [['--admin-email', 'very.long.local.part@example.com', '--admin-password', 'Very.Long.Local.Part'], /must not be the e-mail address/],
    ];
    const runs = await Promise.all(cases.map(([args]) => runCli(['db', 'create', NAME, ...args], { FF_DATA_DIR: dataDir })));
    runs.forEach((run, i) => {
      expect(run.code, run.stdout + run.stderr).toBe(2);
      expect(run.stderr).toMatch(/^error: The administrator password is refused: /);
      expect(run.stderr).toMatch(cases[i]![1]);
      expect(run.stdout).not.toContain('Admin login');
    });
    expect(await engine.exists(NAME)).toBe(false);
  });

  it('applies the rule to FF_ADMIN_PASSWORD as well', async () => {
    const run = await runCli(['db', 'create', NAME], { FF_DATA_DIR: dataDir, FF_ADMIN_PASSWORD: 'tooshort' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/The administrator password is refused: Password must be at least 12 characters long/);
    expect(await engine.exists(NAME)).toBe(false);
  });
});

describe('fieldforge serve', () => {
  it('refuses to create its first database with a weak FF_ADMIN_PASSWORD, before creating anything', async () => {
    // The embedded engine in an empty data directory: the first start creates database main.
    const run = await runCliWithin(30_000, ['serve', '--port', '0'], { DATABASE_URL: '', FF_DATA_DIR: dataDir, FF_ADMIN_PASSWORD: 'admin@example.com' });
    expect(run.code, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toMatch(/The administrator password is refused: Password must not be the e-mail address/);
    expect(run.stdout).not.toContain('serving on');
    const databases = await readdir(join(dataDir, 'databases')).catch(() => [] as string[]);
    expect(databases.filter((d) => !d.endsWith('.lock'))).toEqual([]);
  });
});

describe('createDatabase', () => {
  it('throws a ValidationError for a password the API would refuse, and creates nothing', async () => {
    await expect(createDatabase(platform, NAME, { adminPassword: 'password' })).rejects.toThrow(ValidationError);
    await expect(createDatabase(platform, NAME, { adminEmail: 'boss@example.com', adminPassword: ' BOSS@example.com ' }))
      .rejects.toThrow(/must not be the e-mail address/);
    expect(await engine.exists(NAME)).toBe(false);
  });

  it('generates passwords that pass the rule', () => {
    for (let i = 0; i < 200; i++) expect(() => checkPasswordRule(generatePassword(), 'admin@example.com')).not.toThrow();
  });
});
