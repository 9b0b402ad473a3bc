/**
 * Turns requested field paths (`['name', 'stage.name', 'tags.name', 'project.owner.email']`) into
 * a tree checked against the model: each node is a field, relational nodes may have children.
 * Unknown names are a 400 naming the path.
 */
import { BadRequest } from '../../errors.js';
import type { Field } from '../fields/field.js';
import { RelationalField } from '../fields/relational-fields.js';
import type { ModelMeta } from '../model-meta.js';

export interface FieldTree {
  readonly meta: ModelMeta;
  readonly fields: Map<string, { field: Field; children: FieldTree | null }>;
}

const MAX_PATHS = 200;
const MAX_DEPTH = 6;

export function buildFieldTree(meta: ModelMeta, paths: readonly unknown[], publicOnly: boolean): FieldTree {
  if (paths.length > MAX_PATHS) throw new BadRequest(`At most ${MAX_PATHS} field paths`);
  const root: FieldTree = { meta, fields: new Map() };
  for (const raw of paths) {
    if (typeof raw !== 'string' || raw === '') throw new BadRequest('Field paths are non-empty strings');
    const segs = raw.split('.');
    if (segs.length > MAX_DEPTH) throw new BadRequest(`Field path '${raw.slice(0, 80)}' is deeper than ${MAX_DEPTH} levels`);
    let node = root;
    segs.forEach((seg, i) => {
      const f = node.meta.fields.get(seg);
      if (!f || (publicOnly && f.options.internal)) {
        throw new BadRequest(`Unknown field '${seg.slice(0, 60)}' on model ${node.meta.name} in path '${raw.slice(0, 80)}'`);
      }
      let entry = node.fields.get(seg);
      if (!entry) {
        entry = { field: f, children: null };
        node.fields.set(seg, entry);
      }
      if (i < segs.length - 1) {
        if (!(f instanceof RelationalField)) {
          throw new BadRequest(`'${seg}' is not a relation; cannot read '${segs.slice(i + 1).join('.')}' through it`);
        }
        entry.children ??= { meta: f.target, fields: new Map() };
        node = entry.children;
      }
    });
  }
  return root;
}

/** Every stored, non-internal field of a model (what a query without `fields` returns). */
export function defaultFieldPaths(meta: ModelMeta): string[] {
  return [...meta.fields.values()]
    .filter((f) => (f.isStored || f.name === 'display_name') && !f.options.internal)
    .map((f) => f.name);
}
