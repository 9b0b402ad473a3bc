/**
 * A module's `manifest.yaml` (spec §2.7), read and checked: identifier matching the directory,
 * dependencies including `core`, known keys only.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { parse } from 'yaml';
import { ModuleError } from '../errors.js';

export interface Manifest {
  readonly name: string;
  readonly identifier: string;
  readonly category: string;
  readonly description: string;
  readonly dependencies: readonly string[];
  readonly icon: string;
  readonly color: string;
  /** Data files in load order (relative to the module); default: security/, data/, views/ by name. */
  readonly data: readonly string[] | null;
}

const MODULE_ID = /^[a-z][a-z0-9_]{0,63}$/;
const KEYS = new Set(['name', 'identifier', 'category', 'description', 'dependencies', 'icon', 'color', 'data', 'version']);

export async function readManifest(dir: string): Promise<Manifest> {
  const file = `${dir}/manifest.yaml`;
  let raw: unknown;
  try {
    raw = parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new ModuleError(`Cannot read ${file}: ${(err as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ModuleError(`${file} must be a mapping`);
  const m = raw as Record<string, unknown>;
  for (const key of Object.keys(m)) if (!KEYS.has(key)) throw new ModuleError(`${file}: unknown key '${key}'`);
  const identifier = m.identifier;
  if (typeof identifier !== 'string' || !MODULE_ID.test(identifier)) {
    throw new ModuleError(`${file}: 'identifier' must be a lowercase identifier`);
  }
  if (identifier !== basename(dir)) throw new ModuleError(`${file}: identifier '${identifier}' must match its directory name`);
  const deps = m.dependencies ?? [];
  if (!Array.isArray(deps) || deps.some((d) => typeof d !== 'string' || !MODULE_ID.test(d))) {
    throw new ModuleError(`${file}: 'dependencies' must be a list of module identifiers`);
  }
  if (identifier !== 'core' && !deps.includes('core')) throw new ModuleError(`${file}: 'dependencies' must include core`);
  const str = (key: string, fallback = ''): string => {
    const v = m[key] ?? fallback;
    if (typeof v !== 'string') throw new ModuleError(`${file}: '${key}' must be a string`);
    return v;
  };
  const data = m.data === undefined ? null : m.data;
  if (data !== null && (!Array.isArray(data) || data.some((d) => typeof d !== 'string' || d.includes('..')))) {
    throw new ModuleError(`${file}: 'data' must be a list of relative file paths`);
  }
  return {
    name: str('name', identifier), identifier, category: str('category'), description: str('description'),
    dependencies: deps as string[], icon: str('icon'), color: str('color'), data: data as string[] | null,
  };
}
