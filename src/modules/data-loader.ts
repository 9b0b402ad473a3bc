/**
 * Loads a module's data files (`data-files.ts`): each record is upserted by its identifier (an
 * upgrade updates, never duplicates), its relational values given as identifiers or ids.
 *
 * Records are written in batches — the records of one model in one file — so that loading costs
 * a few statements per batch, not a few per record (`data-batch.ts`). A record whose reference
 * points at a record of the module that has yet to load waits for the next pass, so order does
 * not matter within a module; a pass that loads nothing means the rest refer to each other in a
 * cycle.
 */
import { ModuleError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import type { ModuleDescriptor } from './module-catalog.js';
import { upsertBatch } from './data-batch.js';
import { checkDataRecord } from './data-checks.js';
import { dataFiles, readDataFile, recordWhere, type DataRecord } from './data-files.js';
import { IdentifierIndex, recordKey, resolveReferences } from './data-references.js';

export async function loadModuleData(mod: ModuleDescriptor): Promise<number> {
  const moduleId = mod.manifest.identifier;
  const registry = currentEnv().registry;
  const records: DataRecord[] = [];
  for (const file of await dataFiles(mod)) records.push(...(await readDataFile(moduleId, file)));
  const position = new Map(records.map((rec, i) => [rec, i]));
  const index = new IdentifierIndex();
  let queue = records;
  while (queue.length) {
    const pending = new Set(queue.map((r) => recordKey(r.model, r.identifier)));
    const waiting: DataRecord[] = [];
    for (const batch of batches(queue)) {
      const meta = registry.meta(batch[0]!.model);
      const resolved = await resolveReferences(moduleId, meta, batch, pending, index);
      for (const { rec, vals } of resolved.ready) checkDataRecord(meta, vals, recordWhere(rec));
      await upsertBatch(meta, resolved.ready, index);
      for (const { rec } of resolved.ready) pending.delete(recordKey(rec.model, rec.identifier));
      waiting.push(...resolved.waiting);
    }
    if (waiting.length === queue.length) {
      const r = waiting.sort((a, b) => position.get(a)! - position.get(b)!)[0]!;
      throw new ModuleError(`${r.file} record ${r.index + 1} (${r.identifier}): references a record that never loads (cycle)`);
    }
    queue = waiting.sort((a, b) => position.get(a)! - position.get(b)!);
  }
  return records.length;
}

/**
 * The queue's records by file and model, in order of first appearance. A record repeating an
 * identifier of its batch starts a new one, so that it updates what the earlier one created.
 */
function batches(queue: readonly DataRecord[]): DataRecord[][] {
  const out: DataRecord[][] = [];
  const open = new Map<string, { recs: DataRecord[]; identifiers: Set<string> }>();
  for (const rec of queue) {
    const key = `${rec.file}\0${rec.model}`;
    let batch = open.get(key);
    if (!batch || batch.identifiers.has(rec.identifier)) {
      batch = { recs: [], identifiers: new Set() };
      open.set(key, batch);
      out.push(batch.recs);
    }
    batch.recs.push(rec);
    batch.identifiers.add(rec.identifier);
  }
  return out;
}
