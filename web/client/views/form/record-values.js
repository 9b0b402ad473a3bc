/**
 * The form's values and what is sent to the server. In the form a link is `{id, display_name}`,
 * tags an array of links, lines an array of `FormLine`s; on the wire (create, update, ui-effect)
 * a link is its id, tags a list of ids, and lines the OneToMany write format: an id keeps a saved
 * line as it is, `{id, …changes}` changes it, an object without id creates one; a saved line left
 * out is removed.
 */

/**
 * @typedef {import('../../fields/field-props.js').FieldInfo} FieldInfo
 * @typedef {{key: string, id?: number, values: Record<string, any>, saved: Record<string, any>, touched?: string[]}} FormLine
 */

let lineCounter = 0;

/** A line of a lines table, saved (`values` as read) or new. @param {Record<string, any>} values @param {boolean} saved */
export function formLine(values, saved) {
  lineCounter += 1;
  const id = saved && typeof values.id === 'number' ? values.id : undefined;
  return { key: id ? `line-${id}` : `new-${lineCounter}`, id, values: { ...values }, saved: saved ? { ...values } : {} };
}

/** @param {unknown} value */
export function isEmptyValue(value) {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

/**
 * One value on the wire.
 * @param {FieldInfo} field @param {any} value @param {Record<string, Record<string, FieldInfo>>} [lineFields] registries of line models
 */
export function wireValue(field, value, lineFields = {}) {
  if (value === undefined) return undefined;
  switch (field.type) {
    case 'ManyToOne':
      return value && typeof value === 'object' ? value.id : value ?? null;
    case 'ManyToMany':
      return Array.isArray(value) ? value.map((l) => (l && typeof l === 'object' ? l.id : l)) : [];
    case 'File':
      return value && typeof value === 'object' && 'id' in value ? value.id : value ?? null;
    case 'OneToMany':
      return Array.isArray(value) ? value.map((line) => lineCommand(line, lineFields[field.related_model ?? ''] ?? {})) : [];
    default:
      return value;
  }
}

/** Comparable text of a value (links by id). @param {FieldInfo} field @param {any} value */
function comparable(field, value) {
  if (field.type === 'OneToMany') return JSON.stringify(wireValue(field, value, {}));
  return JSON.stringify(wireValue(field, value) ?? null);
}

/** @param {FieldInfo} field @param {any} a @param {any} b */
export function sameValue(field, a, b) {
  return comparable(field, a) === comparable(field, b);
}

/**
 * The wire form of a line: its id when unchanged, `{id, …changes}` when changed, all its set
 * values when new.
 * @param {FormLine} line @param {Record<string, FieldInfo>} fields
 */
export function lineCommand(line, fields) {
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [name, value] of Object.entries(line.values)) {
    const field = fields[name];
    if (!field || name === 'id' || field.readonly || field.type === 'OneToMany') continue;
    if (line.id) {
      if (!sameValue(field, value, line.saved[name])) out[name] = wireValue(field, value);
    } else if (field.computed && !line.touched?.includes(name)) {
      // A new line's computed value came from an effect: the server computes it again, and sending
      // it would make it a typed value that no longer follows the product.
      continue;
    } else if (!isEmptyValue(value) || field.type === 'Boolean') {
      out[name] = wireValue(field, value);
    }
  }
  if (!line.id) return out;
  return Object.keys(out).length ? { id: line.id, ...out } : line.id;
}

/** Whether a lines value differs from the saved lines. @param {FormLine[]} lines @param {FormLine[]} savedLines @param {Record<string, FieldInfo>} fields */
function linesChanged(lines, savedLines, fields) {
  if (lines.length !== savedLines.length) return true;
  return lines.some((line, i) => line.key !== savedLines[i].key || typeof lineCommand(line, fields) !== 'number');
}

/**
 * The names of the fields whose value differs from the saved one.
 * @param {Record<string, FieldInfo>} fields @param {string[]} names @param {Record<string, any>} values @param {Record<string, any>} saved
 * @param {Record<string, Record<string, FieldInfo>>} lineFields
 */
export function changedNames(fields, names, values, saved, lineFields) {
  return names.filter((name) => {
    const field = fields[name];
    if (!field) return false;
    if (field.type === 'OneToMany') return linesChanged(values[name] ?? [], saved[name] ?? [], lineFields[field.related_model ?? ''] ?? {});
    return !sameValue(field, values[name], saved[name]);
  });
}

/**
 * The body of a create (every set writable value) or an update (the changed writable values).
 * @param {Record<string, FieldInfo>} fields @param {string[]} names @param {Record<string, any>} values
 * @param {Record<string, any> | null} saved null for a new record
 * @param {Record<string, Record<string, FieldInfo>>} lineFields
 */
export function writeBody(fields, names, values, saved, lineFields) {
  /** @type {Record<string, unknown>} */
  const body = {};
  const chosen = saved ? changedNames(fields, names, values, saved, lineFields) : names;
  for (const name of chosen) {
    const field = fields[name];
    if (!field || field.readonly || name === 'id') continue;
    const value = values[name];
    if (!saved && isEmptyValue(value) && field.type !== 'Boolean') continue;
    body[name] = wireValue(field, value, lineFields);
  }
  return body;
}

/**
 * Merges a `ui-effect` answer into a set of values: a link answered as a bare id that the form
 * already holds keeps its name; lines are merged one by one (the answer lists them in the order
 * sent, a bare id meaning "unchanged").
 * @param {Record<string, FieldInfo>} fields @param {Record<string, any>} values @param {Record<string, any>} answer
 * @returns {Record<string, any>} the new values
 */
export function mergeEffect(fields, values, answer) {
  const next = { ...values };
  for (const [name, answered] of Object.entries(answer)) {
    const field = fields[name];
    if (!field) continue;
    if (field.type === 'OneToMany') {
      if (!Array.isArray(answered) || !Array.isArray(values[name])) continue;
      next[name] = values[name].map((/** @type {FormLine} */ line, i) => {
        const item = answered[i];
        if (!item || typeof item !== 'object') return line;
        const { id: _id, ...changes } = item;
        return { ...line, values: mergeLinks(line.values, changes) };
      });
      continue;
    }
    next[name] = mergeLink(values[name], answered);
  }
  return next;
}

/** @param {Record<string, any>} values @param {Record<string, any>} changes */
function mergeLinks(values, changes) {
  const next = { ...values };
  for (const [name, value] of Object.entries(changes)) next[name] = mergeLink(values[name], value);
  return next;
}

/** A bare id the form already names stays a named link. @param {any} current @param {any} answered */
function mergeLink(current, answered) {
  if (typeof answered === 'number' && current && typeof current === 'object' && current.id === answered) return current;
  return answered;
}
