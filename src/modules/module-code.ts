/**
 * Loads a module's model code from `models/index.ts` — the only registration point — and sorts
 * its exports into model declarations and extensions of other modules' models.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ModuleError } from '../errors.js';
import { Model, type ModelClass } from '../orm/model.js';
import { isModelExtension, type ModelExtension } from '../orm/model-extension.js';
import type { ModuleCode } from '../orm/registry.js';
import type { ModuleDescriptor } from './module-catalog.js';
import { ensureModuleLoader } from './module-loader.js';

const cache = new Map<string, Promise<ModuleCode>>();

export function loadModuleCode(mod: ModuleDescriptor): Promise<ModuleCode> {
  // Before any module file is imported: the platform decides how module files load (ESM, and
  // `fieldforge` is this platform), not the package.json that may or may not sit above them.
  ensureModuleLoader();
  let pending = cache.get(mod.dir);
  if (!pending) {
    pending = importModuleCode(mod);
    cache.set(mod.dir, pending);
    pending.catch(() => cache.delete(mod.dir));
  }
  return pending;
}

async function importModuleCode(mod: ModuleDescriptor): Promise<ModuleCode> {
  const id = mod.manifest.identifier;
  const index = join(mod.dir, 'models', 'index.ts');
  try {
    await access(index);
  } catch {
    return { id, dir: mod.dir, declarations: [], extensions: [] };
  }
  let exports: Record<string, unknown>;
  try {
    exports = await import(pathToFileURL(index).href);
  } catch (err) {
    throw new ModuleError(`Module '${id}': loading models/index.ts failed: ${(err as Error).message}`);
  }
  const declarations: ModelClass[] = [];
  const extensions: ModelExtension[] = [];
  for (const value of Object.values(exports)) {
    if (typeof value === 'function' && value.prototype instanceof Model) declarations.push(value as ModelClass);
    else if (isModelExtension(value)) extensions.push(value);
  }
  return { id, dir: mod.dir, declarations, extensions };
}
