/**
 * Runs once per `npm test`: installs each template module set into its own database and
 * provides the template names and API keys to the test files; drops them at the end.
 */
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { PostgresEngine } from '../src/db/postgres-engine.js';
import { BUILTIN_MODULES_DIR, ModuleCatalog } from '../src/modules/module-catalog.js';
import { Platform } from '../src/platform/platform.js';
import { createDatabase } from '../src/platform/database-lifecycle.js';
import { createServiceAccountKey } from '../src/auth/api-keys.js';
import { TEST_DATABASE_URL } from './support/services.js';
import { TEMPLATE_SETS, templateName, type TemplateInfo, type TemplateSet } from './support/templates.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templates: Record<TemplateSet, TemplateInfo>;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runId = randomBytes(3).toString('hex');
  const engine = new PostgresEngine({ url: TEST_DATABASE_URL });
  const platform = new Platform(engine, await ModuleCatalog.scan([BUILTIN_MODULES_DIR]));
  // Leftovers of interrupted runs are not dropped here: another run may be using them right now.
  const templates = {} as Record<TemplateSet, TemplateInfo>;
  for (const set of Object.keys(TEMPLATE_SETS) as TemplateSet[]) {
    const database = templateName(runId, set);
    await createDatabase(platform, database, { modules: TEMPLATE_SETS[set], adminPassword: 'admin-password-for-tests' });
    const { key } = await platform.run(database, {}, () => createServiceAccountKey({ name: 'test admin', groups: ['core.group_admin', 'core.group_user'] }));
    templates[set] = { database, apiKey: key };
    await engine.closeDatabase(database);
  }
  project.provide('templates', templates);
  await platform.close();
  return async () => {
    const cleanup = new PostgresEngine({ url: TEST_DATABASE_URL });
    for (const { database } of Object.values(templates)) await cleanup.drop(database).catch(() => {});
    await cleanup.close();
  };
}
