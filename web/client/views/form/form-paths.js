/**
 * The field paths a form reads (`POST /api/fetch` `fields`): each shown field, a Monetary's
 * currency with what formatting needs (`currency.symbol`, …), and each lines table's columns.
 */

/** @typedef {import('../../fields/field-props.js').FieldInfo} FieldInfo */

const CURRENCY_PARTS = ['symbol', 'position', 'rounding', 'name'];

/**
 * @param {Record<string, FieldInfo>} fields @param {string[]} names
 * @param {Record<string, Record<string, FieldInfo>>} lineFields @param {Record<string, string[]>} lineColumns
 */
export function formPaths(fields, names, lineFields, lineColumns) {
  const paths = new Set(['display_name']);
  /** @param {string} prefix @param {FieldInfo} field */
  const currency = (prefix, field) => {
    if (field.type === 'Monetary' && field.currency_field) for (const part of CURRENCY_PARTS) paths.add(`${prefix}${field.currency_field}.${part}`);
  };
  for (const name of names) {
    const field = fields[name];
    if (!field) continue;
    if (field.type === 'OneToMany') {
      const registry = lineFields[field.related_model ?? ''] ?? {};
      paths.add(`${name}.id`);
      for (const column of lineColumns[name] ?? []) {
        paths.add(`${name}.${column}`);
        if (registry[column]) currency(`${name}.`, registry[column]);
      }
      continue;
    }
    paths.add(name);
    currency('', field);
  }
  return [...paths];
}
