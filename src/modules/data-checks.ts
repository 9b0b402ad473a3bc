/**
 * Checks of data records. Platform records, for what the database cannot express: a ModelAccess,
 * view or action must name an installed model, and a view may only place fields that model has.
 * Every record, for what the write path checks value by value (conversion, required fields): the
 * loader writes records in batches, so it runs these first, for an error to name its record.
 */
import { ModuleError, ValidationError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import { FileField } from '../orm/fields/relational-fields.js';
import type { ModelMeta } from '../orm/model-meta.js';
import { checkRequired, sortValues, type WriteMode } from '../orm/write/write-values.js';
import { isUpload } from './data-uploads.js';

export function checkDataRecord(meta: ModelMeta, vals: Record<string, unknown>, where: string): void {
  if (!['ModelAccess', 'UiView', 'WindowAction', 'RecordRule'].includes(meta.name)) return;
  const registry = currentEnv().registry;
  const model = vals.model;
  if (typeof model !== 'string' || !registry.has(model)) {
    throw new ModuleError(`${where}: 'model' must name an installed model (got '${String(model)}')`);
  }
  if (meta.name === 'UiView') checkArch(registry.meta(model), vals.arch, where);
}

function checkArch(target: ModelMeta, arch: unknown, where: string): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') throw new ModuleError(`${where}: arch nodes are one-key maps (row, column, field)`);
    const [kind, body] = Object.entries(node)[0] ?? [];
    if (kind === 'row') return visit(body);
    if (kind === 'column') return visit((body as { children?: unknown })?.children ?? []);
    if (kind === 'field') {
      const name = (body as { name?: unknown })?.name;
      if (typeof name !== 'string' || !target.fields.has(name)) {
        throw new ModuleError(`${where}: view places unknown field '${String(name)}' of ${target.name}`);
      }
      return;
    }
    throw new ModuleError(`${where}: unknown arch node '${String(kind)}'`);
  };
  if (!Array.isArray(arch)) throw new ModuleError(`${where}: 'arch' is a list of nodes`);
  visit(arch);
}

/** The write path's checks of one record's values, as a ModuleError naming the record. */
export function checkWriteValues(meta: ModelMeta, vals: Record<string, unknown>, mode: WriteMode, where: string): void {
  try {
    // An upload stands for the attachment id it becomes.
    const plain = Object.fromEntries(Object.entries(vals).map(([k, v]) => [k, meta.fields.get(k) instanceof FileField && isUpload(v) ? 1 : v]));
    const { columns } = sortValues(meta, plain, mode);
    if (mode === 'create') {
      for (const f of meta.fields.values()) {
        if (f.column && !f.isComputed && !columns.has(f) && f.options.default !== undefined) {
          // A default function (maybe async, a lookup) runs at create time; here it only counts as given.
          columns.set(f, typeof f.options.default === 'function' ? true : f.toColumn(f.options.default));
        }
      }
    }
    checkRequired(meta, columns, mode);
  } catch (err) {
    if (err instanceof ValidationError) throw new ModuleError(`${where}: ${err.message}`);
    throw err;
  }
}
