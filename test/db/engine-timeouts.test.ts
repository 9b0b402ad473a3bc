/**
 * `FF_STATEMENT_TIMEOUT` and `FF_LOCK_TIMEOUT` reach every connection of a database's pool, from
 * the environment through `bootPlatform` to either engine; an engine built without them (tests,
 * tools) sets no limit. The effect of the limits is tested through HTTP in
 * `test/http/statement-timeout.test.ts`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../src/config/settings.js';
import type { Engine } from '../../src/db/engine.js';
import { PostgresEngine } from '../../src/db/postgres-engine.js';
import { bootPlatform } from '../../src/platform/boot.js';
import type { Platform } from '../../src/platform/platform.js';
import { TEST_DATABASE_URL } from '../support/services.js';

let dataDir: string;
const booted: Platform[] = [];
const NAME = `t_${randomBytes(4).toString('hex')}_timeouts`;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ff-timeouts-'));
  const engine = new PostgresEngine({ url: TEST_DATABASE_URL });
  await engine.create(NAME);
  await engine.close();
});
afterAll(async () => {
  for (const platform of booted) await platform.close();
  const engine = new PostgresEngine({ url: TEST_DATABASE_URL });
  await engine.drop(NAME).catch(() => {});
  await engine.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function boot(env: Record<string, string>): Promise<Platform> {
  const platform = await bootPlatform(readSettings({ FF_DATA_DIR: dataDir, ...env }));
  booted.push(platform);
  return platform;
}

/** The limits a connection of database `name`'s pool runs under. */
async function limits(engine: Engine, name: string): Promise<{ statement: string; lock: string }> {
  const db = await engine.open(name);
  const { rows } = await sql<{ statement: string; lock: string }>`
    SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock`.execute(db.executor);
  return rows[0]!;
}

describe('PostgreSQL server', () => {
  it('takes FF_STATEMENT_TIMEOUT and FF_LOCK_TIMEOUT (seconds) from the environment', async () => {
    const platform = await boot({ DATABASE_URL: TEST_DATABASE_URL, FF_STATEMENT_TIMEOUT: '0.5', FF_LOCK_TIMEOUT: '0.25' });
    expect(await limits(platform.engine, NAME)).toEqual({ statement: '500ms', lock: '250ms' });
  });

  it('defaults to 30 s and 10 s; 0 means no limit', async () => {
    expect(await limits((await boot({ DATABASE_URL: TEST_DATABASE_URL })).engine, NAME)).toEqual({ statement: '30s', lock: '10s' });
    const unlimited = await boot({ DATABASE_URL: TEST_DATABASE_URL, FF_STATEMENT_TIMEOUT: '0', FF_LOCK_TIMEOUT: '0' });
    expect(await limits(unlimited.engine, NAME)).toEqual({ statement: '0', lock: '0' });
  });

  it('an engine built without them sets no limit', async () => {
    const engine = new PostgresEngine({ url: TEST_DATABASE_URL });
    try {
      expect(await limits(engine, NAME)).toEqual({ statement: '0', lock: '0' });
    } finally {
      await engine.close();
    }
  });
});

describe('PGlite', () => {
  it('sets them on each database it opens', async () => {
    const platform = await boot({ FF_STATEMENT_TIMEOUT: '0.5', FF_LOCK_TIMEOUT: '0.25' });
    expect(platform.engine.kind).toBe('pglite');
    await platform.engine.create('main');
    expect(await limits(platform.engine, 'main')).toEqual({ statement: '500ms', lock: '250ms' });
  }, 60_000);
});
