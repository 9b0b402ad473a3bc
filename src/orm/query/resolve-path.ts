/**
 * Resolves a field path (`stage__name__icontains`, or the dotted `stage.name`) against a model,
 * step by step, deciding where the path ends and whether its last segment is a lookup. Unknown
 * names are errors that say which model lacks them.
 */
import { QuerySyntaxError } from '../../errors.js';
import type { Field } from '../fields/field.js';
import type { ModelMeta } from '../model-meta.js';
import { LOOKUPS, type Lookup } from './filter-ast.js';

const LOOKUP_SET = new Set<string>(LOOKUPS);

export function isLookup(segment: string): segment is Lookup {
  return LOOKUP_SET.has(segment);
}

/** The field `name` of `meta`, or a precise error. */
export function requireField(meta: ModelMeta, name: string, publicOnly: boolean, position?: number): Field {
  const f = meta.fields.get(name);
  if (!f || (publicOnly && f.options.internal)) {
    throw new QuerySyntaxError(`Unknown field '${name.slice(0, 60)}' on model ${meta.name}`, position);
  }
  return f;
}

/** Splits the trailing lookup off a path when the last segment is one (and not a field of the target). */
export function splitLookup(segments: readonly string[]): { path: string[]; lookup: Lookup | null } {
  const last = segments[segments.length - 1];
  if (segments.length > 1 && last !== undefined && isLookup(last)) {
    return { path: segments.slice(0, -1), lookup: last };
  }
  return { path: [...segments], lookup: null };
}
