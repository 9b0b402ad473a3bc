/**
 * Checks of platform data records that the database cannot express: a ModelAccess, view or
 * action must name an installed model, and a view may only place fields that model has.
 */
import { ModuleError } from '../errors.js';
import { currentEnv } from '../orm/env.js';
import type { ModelMeta } from '../orm/model-meta.js';

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
