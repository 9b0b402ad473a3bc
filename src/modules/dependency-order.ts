/**
 * Orders modules so that each comes after its dependencies (ties broken by identifier, so the
 * order is the same everywhere). A missing dependency or a cycle is an error naming the modules.
 */
import { ModuleError } from '../errors.js';
import type { ModuleCatalog } from './module-catalog.js';

/** `requested` plus everything they depend on, dependencies first. */
export function dependencyOrder(catalog: ModuleCatalog, requested: readonly string[]): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string, path: string[]): void => {
    if (state.get(id) === 'done') return;
    if (state.get(id) === 'visiting') {
      const cycle = [...path.slice(path.indexOf(id)), id];
      throw new ModuleError(`Module dependency cycle: ${cycle.join(' -> ')}`);
    }
    const mod = catalog.modules.get(id);
    if (!mod) {
      const who = path[path.length - 1];
      throw new ModuleError(who ? `Module '${who}' depends on '${id}', which is not available` : `Unknown module '${id}'`);
    }
    state.set(id, 'visiting');
    for (const dep of [...mod.manifest.dependencies].sort()) visit(dep, [...path, id]);
    state.set(id, 'done');
    order.push(id);
  };
  for (const id of [...new Set(requested)].sort()) visit(id, []);
  return order;
}
