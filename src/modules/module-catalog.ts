/**
 * The modules this process can install: every directory with a manifest under the built-in
 * `modules/` folder and the `FF_ADDONS_PATH` folders. An identifier found twice is an error
 * naming both places.
 */
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../config/settings.js';
import { ModuleError } from '../errors.js';
import { readManifest, type Manifest } from './manifest.js';

export interface ModuleDescriptor {
  readonly manifest: Manifest;
  readonly dir: string;
}

export const BUILTIN_MODULES_DIR = fileURLToPath(new URL('../../modules', import.meta.url));

/** Built-in modules first, then the add-on directories (`FF_ADDONS_PATH`). */
export function moduleRoots(settings: Pick<Settings, 'addonsPaths'>): string[] {
  return [BUILTIN_MODULES_DIR, ...settings.addonsPaths];
}

export class ModuleCatalog {
  private constructor(readonly modules: ReadonlyMap<string, ModuleDescriptor>) {}

  static async scan(roots: readonly string[]): Promise<ModuleCatalog> {
    const modules = new Map<string, ModuleDescriptor>();
    for (const root of roots.map((r) => resolve(r))) {
      let entries: string[];
      try {
        entries = (await readdir(root)).sort();
      } catch {
        throw new ModuleError(`Module directory '${root}' cannot be read`);
      }
      for (const name of entries) {
        const dir = join(root, name);
        if (!(await isFile(join(dir, 'manifest.yaml')))) continue;
        const manifest = await readManifest(dir);
        const seen = modules.get(manifest.identifier);
        if (seen) throw new ModuleError(`Module '${manifest.identifier}' is found twice: ${seen.dir} and ${dir}`);
        modules.set(manifest.identifier, { manifest, dir });
      }
    }
    return new ModuleCatalog(modules);
  }

  get(id: string): ModuleDescriptor {
    const m = this.modules.get(id);
    if (!m) throw new ModuleError(`Unknown module '${id}'`);
    return m;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
