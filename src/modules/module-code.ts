/**
 * Loads a module's model code from `models/index.ts` (`index.js` compiled) — the only
 * registration point — and sorts its exports into model declarations and extensions of other
 * modules' models, traits (`model-trait.ts`) and install hooks (`install-hook.ts`).
 */
import { access } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ModuleError } from '../errors.js';
import { Model, type ModelClass } from '../orm/model.js';
import { isModelExtension, type ModelExtension } from '../orm/model-extension.js';
import { isModelTrait, type ModelTrait } from '../orm/model-trait.js';
import { isRecurringJob, type RecurringJob } from '../orm/recurring-job.js';
import type { ModuleCode } from '../orm/registry.js';
import { isInstallHook, type InstallHook } from './install-hook.js';
import type { ModuleDescriptor } from './module-catalog.js';
import { moduleCodeUrl } from './module-loader.js';

/** A module's code: its models, extensions and traits, and the hooks its install runs. */
export interface LoadedModuleCode extends ModuleCode {
  readonly installHooks: readonly InstallHook[];
}

const cache = new Map<string, Promise<LoadedModuleCode>>();

export function loadModuleCode(mod: ModuleDescriptor): Promise<LoadedModuleCode> {
  let pending = cache.get(mod.dir);
  if (!pending) {
    pending = importModuleCode(mod);
    cache.set(mod.dir, pending);
    pending.catch(() => cache.delete(mod.dir));
  }
  return pending;
}

async function importModuleCode(mod: ModuleDescriptor): Promise<LoadedModuleCode> {
  const id = mod.manifest.identifier;
  // `index.js` where the module is compiled (built-in modules in `dist/`, or an add-on shipped built).
  const index = await firstExisting([join(mod.dir, 'models', 'index.ts'), join(mod.dir, 'models', 'index.js')]);
  if (!index) return { id, dir: mod.dir, declarations: [], extensions: [], traits: [], recurringJobs: [], installHooks: [] };
  let exports: Record<string, unknown>;
  try {
    // The loader decides how module files load (ESM, and `fieldforge` is this platform), not the
    // package.json that may or may not sit above them (`module-loader.ts`).
    exports = await import(await moduleCodeUrl(index));
  } catch (err) {
    throw new ModuleError(`Module '${id}': loading models/${basename(index)} failed: ${(err as Error).message}`);
  }
  const declarations: ModelClass[] = [];
  const extensions: ModelExtension[] = [];
  const traits: ModelTrait[] = [];
  const installHooks: InstallHook[] = [];
  const recurringJobs: RecurringJob[] = [];
  for (const value of Object.values(exports)) {
    if (typeof value === 'function' && value.prototype instanceof Model) declarations.push(value as ModelClass);
    else if (isModelExtension(value)) extensions.push(value);
    else if (isModelTrait(value)) traits.push(value);
    else if (isInstallHook(value)) installHooks.push(value);
    else if (isRecurringJob(value)) recurringJobs.push(value);
  }
  return { id, dir: mod.dir, declarations, extensions, traits, recurringJobs, installHooks };
}

async function firstExisting(files: string[]): Promise<string | null> {
  for (const file of files) {
    try {
      await access(file);
      return file;
    } catch { /* next */ }
  }
  return null;
}
