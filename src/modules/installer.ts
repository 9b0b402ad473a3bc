/**
 * Installs and upgrades modules in one database, in a fixed order: resolve the module set
 * (dependencies first) → build the registry → sync the schema → load each new or upgraded
 * module's data → record module state → bump the registry version. All of it is one
 * transaction; while it runs, the database's `installing` flag makes every worker answer 503.
 * The transaction runs in the install window (`install-window.ts`): flag first, requests in
 * flight finished, retried after a lock conflict, so an install under traffic always succeeds.
 */
import { ModuleError } from '../errors.js';
import type { TenantDatabase } from '../db/engine.js';
import type { FileService } from '../files/file-service.js';
import { planSchema } from './schema-sync.js';
import { lockTables, mergeLocks } from '../db/table-locks.js';
import { planSecurityTriggers } from '../access/security-version.js';
import { planCredentialTriggers } from '../auth/credential-version.js';
import { ensureAltchaStore } from '../auth/altcha.js';
import { activeLanguages, loadTranslations, SOURCE_LANGUAGE } from '../i18n/translations.js';
import { installRequestGuard } from '../auth/request-guard.js';
import { bumpRegistryVersion, installedModules } from '../db/platform-state.js';
import { currentEnv, runInEnv } from '../orm/env.js';
import { makeEnv } from '../orm/transaction.js';
import { QuerySet } from '../orm/queryset.js';
import { Registry } from '../orm/registry.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeRecords } from '../orm/write/write-records.js';
import { loadModuleData } from './data-loader.js';
import { dependencyOrder } from './dependency-order.js';
import { inInstallWindow } from './install-window.js';
import type { ModuleCatalog } from './module-catalog.js';
import { loadModuleCode } from './module-code.js';

export interface InstallRequest {
  /** Modules to install (with their dependencies). */
  init?: readonly string[];
  /** Installed modules to upgrade (schema sync and data reload). */
  update?: readonly string[];
}

export interface InstallResult {
  registry: Registry;
  installed: string[];
  updated: string[];
  warnings: string[];
}

export async function buildRegistry(catalog: ModuleCatalog, modules: readonly string[]): Promise<Registry> {
  const order = dependencyOrder(catalog, modules);
  return Registry.build(await Promise.all(order.map((id) => loadModuleCode(catalog.get(id)))));
}

export async function installModules(
  db: TenantDatabase, catalog: ModuleCatalog, request: InstallRequest, files: FileService | null = null,
): Promise<InstallResult> {
  // Flag raised, requests in flight let finish, retried on lock conflicts: `install-window.ts`.
  return inInstallWindow(db, async (trx) => {
    const before = await installedModules(trx);
    for (const id of request.update ?? []) {
      if (!before.includes(id)) throw new ModuleError(`Module '${id}' is not installed in database '${db.name}'; use --init`);
    }
    const order = dependencyOrder(catalog, [...before, ...(request.init ?? []), ...(before.length ? [] : ['core'])]);
    const registry = await buildRegistry(catalog, order);
    // Schema and triggers are compared with the catalog first; every table either will change is
    // then locked at once, in one order (`db/table-locks.ts`), before the first change. An upgrade
    // that changes neither plans nothing and takes no table lock.
    const schema = await planSchema(trx, registry);
    const security = await planSecurityTriggers(trx, registry, schema.created);
    const credential = await planCredentialTriggers(trx, registry, schema.created);
    await lockTables(trx, mergeLocks(schema.locks, security.locks, credential.locks), credentialTables(registry));
    const warnings = await schema.apply();
    await installRequestGuard(trx);
    await security.apply();
    await credential.apply();
    await ensureAltchaStore(trx);
    const fresh = order.filter((id) => !before.includes(id));
    const reload = order.filter((id) => fresh.includes(id) || (request.update ?? []).includes(id));
    await runInEnv(makeEnv(db, registry, trx, { su: true, files }), async () => {
      for (const id of reload) {
        await loadModuleData(catalog.get(id));
        for (const hook of (await loadModuleCode(catalog.get(id))).installHooks) await hook.run();
        await recordModule(catalog, id, fresh.includes(id));
      }
      // Languages already on get the translations of what was just installed or upgraded.
      for (const code of await activeLanguages()) if (code !== SOURCE_LANGUAGE) await loadTranslations(code);
    });
    await bumpRegistryVersion(trx);
    return { registry, installed: fresh, updated: reload.filter((id) => !fresh.includes(id)), warnings };
  });
}

/**
 * The tables the full credential look-ups read, in the order they read them (`resolveApiKey`:
 * `api_key`, `service_account`; `resolveSession`: `auth_session`, `user`): locked after every other
 * table, see `db/table-locks.ts`.
 */
function credentialTables(registry: Registry): string[] {
  return ['ApiKey', 'ServiceAccount', 'AuthSession', 'User'].filter((m) => registry.has(m)).map((m) => registry.meta(m).table);
}

async function recordModule(catalog: ModuleCatalog, id: string, isNew: boolean): Promise<void> {
  const m = catalog.get(id).manifest;
  const meta = currentEnv().registry.meta('Module');
  const vals = {
    name: m.name, category: m.category, description: m.description, icon: m.icon, color: m.color,
    dependencies: m.dependencies, state: 'installed', updated_module_date: new Date().toISOString(),
  };
  const [existing] = await new QuerySet(meta).filter({ identifier: id }).ids();
  if (existing === undefined) await createRecords(meta, [{ ...vals, identifier: id, installed_date: new Date().toISOString() }]);
  else await writeRecords(meta, [existing], isNew ? { ...vals, installed_date: new Date().toISOString() } : vals);
}
