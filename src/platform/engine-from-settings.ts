/** The storage engine the settings select, with their pool, prepare and timeout options (boot and the CLI). */
import type { Settings } from '../config/settings.js';
import { createEngine } from '../db/create-engine.js';
import type { Engine } from '../db/engine.js';

export function engineFromSettings(settings: Settings): Engine {
  return createEngine({
    databaseUrl: settings.databaseUrl, dataDir: settings.dataDir, poolMax: settings.poolMax, prepareStatements: settings.pgPrepare,
    connections: settings.pgConnections,
    statementTimeoutMs: settings.statementTimeoutMs, lockTimeoutMs: settings.lockTimeoutMs,
  });
}
