/**
 * Builds the platform from settings: the engine they select, the module catalog, and the realtime
 * bus (Redis pub/sub with `REDIS_URL`, connected on first use; in-process otherwise).
 */
import { resolveSecret } from '../config/secret.js';
import { engineFromSettings } from './engine-from-settings.js';
import type { Settings } from '../config/settings.js';
import { ModuleCatalog, moduleRoots } from '../modules/module-catalog.js';
import { Platform } from './platform.js';
import { fileServiceFromSettings } from '../files/filestore-config.js';
import { InProcessBus } from '../realtime/in-process-bus.js';

export async function bootPlatform(settings: Settings): Promise<Platform> {
  const engine = engineFromSettings(settings);
  const secret = await resolveSecret(settings.secret, settings.dataDir);
  // Imported only when configured: ioredis is a tenth of the start's module loading.
  const bus = settings.redisUrl
    ? new (await import('../realtime/redis-bus.js')).RedisBus(settings.redisUrl, settings.redisPrefix)
    : new InProcessBus();
  return new Platform(engine, await ModuleCatalog.scan(moduleRoots(settings)), secret, fileServiceFromSettings(settings), bus);
}
