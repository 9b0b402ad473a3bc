/**
 * Q-expression text built from values a person typed (spec §2.1 filter expressions). Values are
 * always written as literals of the filter grammar (quoted strings with its escapes, numbers,
 * True/False/None), never pasted in, so no typed text can change the expression's shape.
 */

/**
 * A string literal: single-quoted, with the grammar's escapes (`\\ \' \n \t \r \uXXXX`).
 * @param {string} text
 */
export function qString(text) {
  let out = "'";
  for (const c of text) {
    if (c === '\\' || c === "'") out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (c === '\t') out += '\\t';
    else if (c === '\r') out += '\\r';
    else if (c < ' ' || c === '\u007f') out += `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return `${out}'`;
}

/**
 * Any scalar value (or a list of them) as a literal.
 * @param {unknown} value
 * @returns {string}
 */
export function qValue(value) {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return `[${value.map(qValue).join(', ')}]`;
  return qString(String(value));
}

/**
 * One condition: `Q(path=value)`.
 * @param {string} path field path with `__` lookups (`stage__display_name__icontains`)
 * @param {unknown} value
 */
export function qCondition(path, value) {
  if (!/^[A-Za-z_][A-Za-z0-9_]*(__[A-Za-z_][A-Za-z0-9_]*)*$/.test(path)) throw new Error(`Not a field path: ${path}`);
  return `Q(${path}=${qValue(value)})`;
}

/**
 * Conditions ANDed (each parenthesised so an `|` inside one stays inside it); '' for none.
 * @param {string[]} parts
 */
export function qAnd(parts) {
  const kept = parts.filter((p) => p && p.trim());
  if (kept.length <= 1) return kept[0] ?? '';
  return kept.map((p) => `(${p})`).join(' & ');
}
