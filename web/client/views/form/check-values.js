/**
 * What the form checks before sending anything: a required field left empty and a text longer
 * than its `max_length` get a message at the field, the way the server would word it, so a
 * person fixes them without a round trip. Lines are checked too (a line without its product).
 */

/**
 * @typedef {import('../../fields/field-props.js').FieldInfo} FieldInfo
 * @typedef {import('./record-values.js').FormLine} FormLine
 */

import { isEmptyValue } from './record-values.js';

/** The message for one value, or null. @param {FieldInfo} field @param {unknown} value */
export function valueProblem(field, value) {
  if (field.readonly) return null;
  if (field.required && field.type !== 'Boolean' && isEmptyValue(value)) return `${field.label ?? field.name} is required`;
  if (field.max_length && typeof value === 'string' && value.length > field.max_length) {
    return `${field.label ?? field.name} takes at most ${field.max_length} characters (${value.length} typed)`;
  }
  return null;
}

/**
 * Messages by field name (`order_lines.3.product` for a line's cell: line key, then field).
 * @param {Record<string, FieldInfo>} fields @param {string[]} names the fields the form shows
 * @param {Record<string, any>} values @param {Record<string, Record<string, FieldInfo>>} lineFields
 * @param {Record<string, string[]>} lineColumns the columns each lines table shows
 */
export function checkValues(fields, names, values, lineFields, lineColumns) {
  /** @type {Record<string, string>} */
  const problems = {};
  for (const name of names) {
    const field = fields[name];
    if (!field) continue;
    if (field.type === 'OneToMany') {
      const columns = lineColumns[name] ?? [];
      const registry = lineFields[field.related_model ?? ''] ?? {};
      for (const line of /** @type {FormLine[]} */ (values[name] ?? [])) {
        for (const column of columns) {
          const problem = registry[column] ? valueProblem(registry[column], line.values[column]) : null;
          if (problem) problems[`${name}.${line.key}.${column}`] = problem;
        }
      }
      continue;
    }
    const problem = valueProblem(field, values[name]);
    if (problem) problems[name] = problem;
  }
  return problems;
}
