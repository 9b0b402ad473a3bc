/**
 * Loads a module's data files — YAML, or TypeScript whose default export returns the records (for
 * data generated from a maintained package or Node's ICU rather than typed by hand): each record
 * `{data_type: <Model>, identifier, …values}` is
 * upserted by its identifier (an upgrade updates, never duplicates). Bare identifiers are
 * qualified with the module (`group_manager` → `project.group_manager`); relational values are
 * identifiers (qualified across modules) or ids. A record whose reference points at a record
 * later in the same module waits for it, so file order does not matter within a module.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { ModuleError, ValidationError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import type { Field } from '../orm/fields/field.js';
import { ManyToManyField, ManyToOneField, OneToManyField } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { QuerySet } from '../orm/queryset.js';
import { createRecords } from '../orm/write/create-records.js';
import { writeRecords } from '../orm/write/write-records.js';
import type { ModuleDescriptor } from './module-catalog.js';
import { checkDataRecord } from './data-checks.js';

const DEFAULT_DIRS = ['security', 'data', 'views'];

interface DataRecord {
  file: string;
  index: number;
  model: string;
  identifier: string;
  values: Record<string, unknown>;
}

class UnresolvedReference extends Error {
  constructor(readonly identifier: string) {
    super(identifier);
  }
}

export function qualify(module: string, identifier: string): string {
  return identifier.includes('.') ? identifier : `${module}.${identifier}`;
}

/** The module's data files in load order. */
export async function dataFiles(mod: ModuleDescriptor): Promise<string[]> {
  if (mod.manifest.data) return mod.manifest.data.map((f) => join(mod.dir, f));
  const files: string[] = [];
  for (const dir of DEFAULT_DIRS) {
    let names: string[] = [];
    try {
      names = await readdir(join(mod.dir, dir));
    } catch {
      continue;
    }
    files.push(...names.filter((n) => /\.(ya?ml|ts)$/.test(n)).sort().map((n) => join(mod.dir, dir, n)));
  }
  return files;
}

export async function loadModuleData(mod: ModuleDescriptor): Promise<number> {
  const moduleId = mod.manifest.identifier;
  const records: DataRecord[] = [];
  for (const file of await dataFiles(mod)) records.push(...(await readRecords(moduleId, file)));
  let queue = records;
  while (queue.length) {
    const pendingIds = new Set(queue.map((r) => `${r.model}:${r.identifier}`));
    const deferred: DataRecord[] = [];
    for (const rec of queue) {
      try {
        await upsert(moduleId, rec, pendingIds);
        pendingIds.delete(`${rec.model}:${rec.identifier}`);
      } catch (err) {
        if (err instanceof UnresolvedReference) deferred.push(rec);
        else throw err;
      }
    }
    if (deferred.length === queue.length) {
      const r = deferred[0]!;
      throw new ModuleError(`${r.file} record ${r.index + 1} (${r.identifier}): references a record that never loads (cycle)`);
    }
    queue = deferred;
  }
  return records.length;
}

/** A TypeScript data file's default export: the records, or a function (maybe async) giving them. */
export type DataFileExport = readonly Record<string, unknown>[] | (() => readonly Record<string, unknown>[] | Promise<readonly Record<string, unknown>[]>);

async function readRecords(moduleId: string, file: string): Promise<DataRecord[]> {
  let doc: unknown;
  try {
    if (file.endsWith('.ts')) {
      const exported = (await import(pathToFileURL(file).href)).default as DataFileExport | undefined;
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

async function upsert(moduleId: string, rec: DataRecord, pending: Set<string>): Promise<void> {
  const meta = currentEnv().registry.meta(rec.model);
  const where = `${rec.file} record ${rec.index + 1} (${rec.identifier})`;
  const vals: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rec.values)) {
    const f = meta.fields.get(key);
    if (!f || f.isComputed && !f.options.setter || ['id', 'display_name'].includes(key)) {
      throw new ModuleError(`${where}: ${rec.model} has no settable field '${key}'`);
    }
    vals[key] = await resolveValue(moduleId, f, value, pending, where);
  }
  checkDataRecord(meta, vals, where);
  const [existing] = await new QuerySet(meta).with_archived().filter({ identifier: rec.identifier }).ids();
  try {
    if (existing !== undefined) await writeRecords(meta, [existing], vals);
    else await createRecords(meta, [{ ...vals, identifier: rec.identifier }]);
  } catch (err) {
    if (err instanceof ValidationError) throw new ModuleError(`${where}: ${err.message}`);
    throw err;
  }
}

async function resolveValue(moduleId: string, f: Field, value: unknown, pending: Set<string>, where: string): Promise<unknown> {
  if (f instanceof ManyToOneField) return value === null ? null : resolveRef(moduleId, f.target, value, pending, where);
  if (f instanceof ManyToManyField) {
    if (!Array.isArray(value)) throw new ModuleError(`${where}: '${f.name}' takes a list of identifiers`);
    return Promise.all(value.map((v) => resolveRef(moduleId, f.target, v, pending, where)));
  }
  if (f instanceof OneToManyField) throw new ModuleError(`${where}: set '${f.name}' from the lines' side (their '${f.inverseName}')`);
  return value;
}

async function resolveRef(moduleId: string, target: ModelMeta, ref: unknown, pending: Set<string>, where: string): Promise<number> {
  if (typeof ref === 'number') return ref;
  if (typeof ref !== 'string') throw new ModuleError(`${where}: a reference is an identifier string`);
  const identifier = qualify(moduleId, ref);
  const [id] = await new QuerySet(target).with_archived().filter({ identifier }).ids();
  if (id !== undefined) return id;
  if (pending.has(`${target.name}:${identifier}`)) throw new UnresolvedReference(identifier);
  throw new ModuleError(`${where}: no ${target.name} with identifier '${identifier}'`);
}
