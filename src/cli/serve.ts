/**
 * `fieldforge serve`: on first start creates database `main` with `core` and prints the admin
 * login; then serves HTTP and the realtime socket. With `--workers N` (N > 1) it forks N workers
 * sharing the port, each serving both, which needs a PostgreSQL server and Redis (PGlite is
 * single-process; the socket pushes and presence travel between workers through Redis).
 *
 * No database is opened at start: each is opened by the first request that needs it, and checked
 * then, once per process, before that request is served (`checkDatabase`). A cluster of many
 * databases starts as fast as one with a single database.
 */
import cluster from 'node:cluster';
import type { Settings } from '../config/settings.js';
import { buildApp } from '../http/app.js';
import { bootPlatform } from '../platform/boot.js';
import { createDatabase } from '../platform/database-lifecycle.js';
import type { Platform } from '../platform/platform.js';
import { clearStaleInstallFlag } from '../db/platform-state.js';
import { applyPendingModules } from '../platform/pending-modules.js';
import { DatabaseNotFound, DatabaseUnavailable, FieldForgeError } from '../errors.js';

export interface ServeOptions {
  port: number;
  host: string;
  workers: number;
}

export async function serve(settings: Settings, options: ServeOptions): Promise<void> {
  if (options.workers > 1) {
    const missing = [!settings.databaseUrl && 'DATABASE_URL', !settings.redisUrl && 'REDIS_URL'].filter(Boolean);
    // A FieldForgeError: the command line exits with code 2, as for any usage error.
    if (missing.length) throw new FieldForgeError(`--workers ${options.workers} needs ${missing.join(' and ')}: PGlite and the in-process bus serve one worker`);
    if (cluster.isPrimary) {
      // The primary serves nothing: it creates `main` in an empty cluster, then forks.
      const platform = await bootPlatform(settings);
      try {
        await ensureFirstDatabase(platform);
      } finally {
        await platform.close();
      }
      for (let i = 0; i < options.workers; i++) cluster.fork();
      cluster.on('exit', (worker, code) => console.error(`worker ${worker.process.pid} exited (${code})`));
      return;
    }
  }
  const platform = await bootPlatform(settings);
  try {
    if (!cluster.isWorker) await ensureFirstDatabase(platform);
  } catch (err) {
    await platform.close();
    throw err;
  }
  platform.onFirstOpen(checkDatabase);
  const app = await buildApp(platform, {
    dev: settings.dev, bodyLimit: settings.bodyLimit, importLimit: settings.importLimit, sessionHours: settings.sessionHours, bulkMax: settings.bulkMax,
    logger: { level: settings.logLevel, format: settings.logFormat },
    realtime: settings.socket,
  });
  const close = async () => {
    await app.close();
    await platform.close();
    process.exit(0);
  };
  process.once('SIGINT', close);
  process.once('SIGTERM', close);
  await app.listen({ port: options.port, host: options.host });
  platform.recurringJobs.start();
  console.log(`FieldForge serving on http://${options.host}:${options.port} (${platform.engine.kind})`);
  // One line per server, not per worker.
  if (!cluster.isWorker || cluster.worker?.id === 1) console.log(`Open ${browserUrl(options.host, options.port)}/web in a browser to sign in.`);
}

/** The address a person types: a wildcard listen address is reached through the loopback one. */
export function browserUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${reachable}:${port}`;
}

/** Creates database `main` when the cluster (or data directory) holds no FieldForge database. */
async function ensureFirstDatabase(platform: Platform): Promise<void> {
  if ((await platform.engine.list()).length) return;
  const created = await createDatabase(platform, 'main', { adminPassword: process.env.FF_ADMIN_PASSWORD || undefined });
  console.log(`Created database 'main' with module core.`);
  console.log(`Admin login: ${created.adminEmail} / ${created.adminPassword}`);
}

/**
 * What a database needs before this process serves it, done when the process first opens it:
 * the install flag of an installer that died is cleared, and what Settings > Modules marked is
 * applied (a restart applies the marks; the first request after it waits for them).
 */
async function checkDatabase(platform: Platform, name: string): Promise<boolean> {
  try {
    const db = await platform.database(name);
    if (await clearStaleInstallFlag(db.executor)) console.warn(`Database '${name}': cleared the install flag of an installer that died`);
    await applyMarkedModules(platform, name);
    return true;
  } catch (err) {
    // A database another process drops, clones or is still creating right now is served all the
    // same: its own requests will say what became of it, and the next open checks it again.
    if (!changingMeanwhile(err)) throw err;
    console.warn(`Database '${name}': not checked, it is being dropped, cloned or created (${(err as Error).message})`);
    return false;
  }
}

/**
 * Installs and upgrades what Settings > Modules marked (spec §2.7: the restart applies them). A
 * failure is reported and leaves the marks; the other databases are served all the same.
 */
async function applyMarkedModules(platform: Platform, name: string): Promise<void> {
  try {
    const result = await applyPendingModules(platform, name);
    if (result) console.log(`Database '${name}': installed [${result.installed.join(', ')}], upgraded [${result.updated.join(', ')}] as marked in Settings > Modules`);
  } catch (err) {
    if (changingMeanwhile(err)) throw err;
    console.error(`Database '${name}': the modules marked in Settings > Modules could not be applied, they stay marked: ${(err as Error).message}`);
  }
}

/**
 * Failures of a database that is changing under us: gone (3D000), our session cut by a
 * `DROP … WITH (FORCE)` or a clone (57P01), or no `ff_state` yet (42P01, mid-creation).
 */
function changingMeanwhile(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e instanceof DatabaseNotFound || e instanceof DatabaseUnavailable) return true;
    if (e.code === '3D000' || e.code === '57P01' || e.code === '42P01') return true;
  }
  return false;
}
