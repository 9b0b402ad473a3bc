/** How a record is named to people: its `_rec_name` value, or `<Verbose name> #<id>`. */
import type { ModelMeta } from './model-meta.js';

export function displayName(meta: ModelMeta, values: Record<string, unknown>): string {
  const v = meta.recName ? values[meta.recName] : null;
  if (v !== null && v !== undefined && v !== '') return String(v);
  return `${meta.verboseName} #${values.id as number}`;
}
