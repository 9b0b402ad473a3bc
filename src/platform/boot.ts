/** Builds the platform from settings: the engine they select and the module catalog. */
import { resolveSecret } from '../config/secret.js';
import { createEngine } from '../db/create-engine.js';
import { moduleRoots, type Settings } from '../config/settings.js';
import { ModuleCatalog } from '../modules/module-catalog.js';
import { Platform } from './platform.js';
import { fileServiceFromSettings } from '../files/filestore-config.js';

export async function bootPlatform(settings: Settings): Promise<Platform> {
  const engine = createEngine({
    databaseUrl: settings.databaseUrl, dataDir: settings.dataDir, poolMax: settings.poolMax, prepareStatements: settings.pgPrepare,
    statementTimeoutMs: settings.statementTimeoutMs, lockTimeoutMs: settings.lockTimeoutMs,
  });
  const secret = await resolveSecret(settings.secret, settings.dataDir);
  return new Platform(engine, await ModuleCatalog.scan(moduleRoots(settings)), secret, fileServiceFromSettings(settings));
}
