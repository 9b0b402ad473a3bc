/**
 * A module's data files read as records — YAML, or TypeScript whose default export returns the
 * records (for data generated from a maintained package or Node's ICU rather than typed by hand).
 * Each record is `{data_type: <Model>, identifier, …values}`; bare identifiers are qualified with
 * the module (`group_manager` → `project.group_manager`).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ModuleError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import type { ModuleDescriptor } from './module-catalog.js';
import { builtWithPlatform, moduleCodeUrl } from './module-loader.js';

const DEFAULT_DIRS = ['security', 'data', 'views'];

export interface DataRecord {
  file: string;
  /** 0-based position in its file. */
  index: number;
  model: string;
  /** Qualified (`core.group_admin`). */
  identifier: string;
  values: Record<string, unknown>;
}

/** A TypeScript data file's default export: the records, or a function (maybe async) giving them. */
export type DataFileExport = readonly Record<string, unknown>[] | (() => readonly Record<string, unknown>[] | Promise<readonly Record<string, unknown>[]>);

export function qualify(module: string, identifier: string): string {
  return identifier.includes('.') ? identifier : `${module}.${identifier}`;
}

/** How errors name a record: `<file> record 3 (core.group_admin)`. */
export function recordWhere(rec: DataRecord): string {
  return `${rec.file} record ${rec.index + 1} (${rec.identifier})`;
}

/** The module's data files in load order. */
export async function dataFiles(mod: ModuleDescriptor): Promise<string[]> {
  // A compiled module (`dist/`) holds its TypeScript data files as `.js`.
  const compiled = builtWithPlatform(mod.dir);
  if (mod.manifest.data) return mod.manifest.data.map((f) => join(mod.dir, compiled ? f.replace(/\.ts$/, '.js') : f));
  const pattern = compiled ? /\.(ya?ml|js)$/ : /\.(ya?ml|ts)$/;
  const files: string[] = [];
  for (const dir of DEFAULT_DIRS) {
    let names: string[] = [];
    try {
      names = await readdir(join(mod.dir, dir));
    } catch {
      continue;
    }
    files.push(...names.filter((n) => pattern.test(n)).sort().map((n) => join(mod.dir, dir, n)));
  }
  return files;
}

export async function readDataFile(moduleId: string, file: string): Promise<DataRecord[]> {
  let doc: unknown;
  try {
    if (/\.[jt]s$/.test(file)) {
      const exported = (await import(await moduleCodeUrl(file))).default as DataFileExport | undefined;
      doc = typeof exported === 'function' ? await exported() : exported;
    } else {
      doc = parse(await readFile(file, 'utf8'));
    }
  } catch (err) {
    throw new ModuleError(`Cannot read data file ${file}: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return [];
  if (!Array.isArray(doc)) throw new ModuleError(`${file}: a data file is a list of records`);
  const registry = currentEnv().registry;
  return doc.map((raw, index) => {
    const where = `${file} record ${index + 1}`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ModuleError(`${where}: must be a mapping`);
    const { data_type, identifier, ...values } = raw as Record<string, unknown>;
    if (typeof data_type !== 'string' || !registry.has(data_type)) {
      const named = typeof identifier === 'string' ? ` (${identifier})` : '';
      throw new ModuleError(`${where}${named}: unknown data_type '${String(data_type)}'`);
    }
    if (typeof identifier !== 'string' || !/^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/i.test(identifier)) {
      throw new ModuleError(`${where}: 'identifier' is required (letters, digits, underscores)`);
    }
    return { file, index, model: data_type, identifier: qualify(moduleId, identifier), values };
  });
}
