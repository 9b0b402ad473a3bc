/**
 * The columns of a lines table when no List view of the line model says otherwise: what a person
 * edits on a line (its writable fields) plus its amounts, never the link back to the parent, the
 * bookkeeping (sequence, company, currency, audit) or nested lines.
 */

/** @typedef {import('../../fields/field-props.js').FieldInfo} FieldInfo */

const HIDDEN = new Set(['id', 'identifier', 'display_name', 'created_date', 'created_by', 'updated_date', 'updated_by', 'sequence', 'company', 'currency', 'active']);
const NOT_IN_CELLS = new Set(['OneToMany', 'Binary', 'File', 'Json', 'Text']);
const MAX_COLUMNS = 8;

/**
 * @param {Record<string, FieldInfo>} registry the line model's registry (entries with `name`)
 * @param {string | undefined} inverse the line's link to its parent (`order`)
 * @returns {string[]}
 */
export function defaultLineColumns(registry, inverse) {
  return Object.values(registry)
    .filter((f) => f.name !== inverse && !HIDDEN.has(f.name) && !NOT_IN_CELLS.has(f.type) && f.visible_setting_holds !== false)
    .filter((f) => !f.readonly || f.type === 'Monetary')
    .slice(0, MAX_COLUMNS)
    .map((f) => f.name);
}
