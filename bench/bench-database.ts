/** Where the benchmarks' databases live, and how they are made. */
import { createServiceAccountKey } from '../src/auth/api-keys.js';
import type { PostgresEngine } from '../src/db/postgres-engine.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { createDatabase } from '../src/platform/database-lifecycle.js';
import { Platform } from '../src/platform/platform.js';

/** The PostgreSQL server the benchmarks use: BENCH_DATABASE_URL, else DATABASE_URL, else the local one. */
export const BENCH_BASE_URL = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** The connection string of database `name` on the server of `base` (user `postgres` unless it names one). */
export function databaseUrl(name: string, base: string = BENCH_BASE_URL): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  if (!url.username && !url.searchParams.has('user')) url.username = 'postgres';
  return url.href;
}

/**
 * Creates database `dbName` with `modules` and an administrator's API key named `keyName`, then
 * lets it go (the platform forgets it, its pool closes) so a server process of the bench can open
 * it. Answers the key.
 */
export async function createBenchDatabase(engine: PostgresEngine, dbName: string, modules: string[], keyName: string): Promise<string> {
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  await createDatabase(platform, dbName, { modules });
  const { key } = await platform.run(dbName, {}, () => createServiceAccountKey({ name: keyName, groups: ['core.group_admin', 'core.group_user'] }));
  platform.forget(dbName);
  await engine.closeDatabase(dbName);
  return key;
}
