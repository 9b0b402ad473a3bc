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

export interface BenchKey {
  name: string;
  groups: string[];
}

/**
 * Creates database `dbName` with `modules` (found among the built-in modules and `addonsPaths`)
 * and an API key for each of `keys`, then lets it go (the platform forgets it, its pool closes) so
 * a server process of the bench can open it. Answers each key with its service account; drops the
 * database again when anything fails.
 */
export async function createBenchDatabaseWithKeys(
  engine: PostgresEngine, dbName: string, modules: string[], keys: BenchKey[], addonsPaths: string[] = [],
): Promise<{ key: string; serviceAccountId: number }[]> {
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR, ...addonsPaths]));
  await createDatabase(platform, dbName, { modules }); // drops it itself on failure
  try {
    const created = await platform.run(dbName, {}, async () => {
      const out: { key: string; serviceAccountId: number }[] = [];
      for (const k of keys) out.push(await createServiceAccountKey(k));
      return out;
    });
    platform.forget(dbName);
    await engine.closeDatabase(dbName);
    return created;
  } catch (err) {
    platform.forget(dbName);
    await engine.closeDatabase(dbName).catch(() => {});
    await engine.drop(dbName).catch(() => {});
    throw err;
  }
}

/** Creates database `dbName` with `modules` and an administrator's API key named `keyName`; answers the key. */
export async function createBenchDatabase(engine: PostgresEngine, dbName: string, modules: string[], keyName: string): Promise<string> {
  const [created] = await createBenchDatabaseWithKeys(engine, dbName, modules, [{ name: keyName, groups: ['core.group_admin', 'core.group_user'] }]);
  return created!.key;
}
