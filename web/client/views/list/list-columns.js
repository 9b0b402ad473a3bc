/**
 * The columns of a list: the `List` arch's fields in order, or, for an action without a list
 * view, a sensible default from the registry (the record's name first, then a few short fields).
 * A column knows what to read for it, whether the server can sort and sum it, and how it aligns.
 */

/**
 * A registry entry (`GET /api/get_registry/{model}`), as the list reads it.
 * @typedef {object} RegistryEntry
 * @property {string} type
 * @property {string} label
 * @property {boolean} [required]
 * @property {boolean} [readonly]
 * @property {boolean} [computed]
 * @property {boolean} [store]
 * @property {string} [related_model]
 * @property {[string, string][]} [choices]
 * @property {number} [precision]
 * @property {string} [currency_field]
 * @property {boolean} [visible_setting_holds]
 * @property {string} [visible_setting]
 */

/** @typedef {Record<string, RegistryEntry>} Registry */

/**
 * @typedef {object} Column
 * @property {string} name the field's name
 * @property {RegistryEntry & {name: string}} field
 * @property {string} label
 * @property {string | null} widget `badge`, `tags`, `toggle`, `priority`, … from the arch
 * @property {Record<string, unknown>} properties
 * @property {boolean} sortable
 * @property {boolean} summable summed in group rows and the footer
 * @property {boolean} numeric right-aligned
 */

/** @typedef {{field: {name: string, properties?: Record<string, unknown>}}} ListArchNode */

const AUDIT = new Set(['id', 'identifier', 'display_name', 'created_date', 'created_by', 'updated_date', 'updated_by']);
const NUMERIC = new Set(['Integer', 'Float', 'Monetary']);
const UNSORTABLE = new Set(['OneToMany', 'ManyToMany', 'Binary', 'Json', 'File']);
const DEFAULT_SKIPPED = new Set(['Text', 'Binary', 'Json', 'OneToMany', 'File']);
const DEFAULT_COLUMNS = 6;

/**
 * Whether the field is stored (so the server can sort, group, filter and sum it).
 * @param {RegistryEntry} entry
 */
export function isStored(entry) {
  return !entry.computed || entry.store === true;
}

/** @param {RegistryEntry} entry */
function isVisible(entry) {
  return entry.visible_setting_holds !== false;
}

/**
 * @param {string} name @param {RegistryEntry} entry @param {Record<string, unknown>} properties
 * @returns {Column}
 */
function column(name, entry, properties) {
  const stored = isStored(entry) || name === 'display_name';
  const numeric = NUMERIC.has(entry.type);
  // Amounts and quantities add up; an Integer often is a code (sequence, colour) and sums only when the arch asks.
  const sumByDefault = entry.type === 'Float' || entry.type === 'Monetary';
  const summable = isStored(entry) && numeric && (properties.sum === true || (sumByDefault && properties.sum !== false));
  return {
    name,
    field: { ...entry, name },
    label: typeof properties.string === 'string' ? properties.string : entry.label,
    widget: typeof properties.widget === 'string' ? properties.widget : null,
    properties,
    sortable: stored && !UNSORTABLE.has(entry.type),
    summable,
    numeric,
  };
}

/**
 * Columns of the arch (unknown or hidden fields skipped), else the default ones.
 * @param {ListArchNode[] | null | undefined} arch
 * @param {Registry} registry
 * @param {{rec_name?: string | null} | null} [modelInfo]
 * @returns {Column[]}
 */
export function listColumns(arch, registry, modelInfo) {
  if (Array.isArray(arch) && arch.length) {
    const columns = [];
    for (const node of arch) {
      const name = node?.field?.name;
      const entry = name ? registry[name] : undefined;
      if (!name || !entry || !isVisible(entry)) continue;
      columns.push(column(name, entry, node.field.properties ?? {}));
    }
    if (columns.length) return columns;
  }
  return defaultColumns(registry, modelInfo);
}

/**
 * The record's name, then the first short stored fields in declaration order.
 * @param {Registry} registry @param {{rec_name?: string | null} | null} [modelInfo]
 */
function defaultColumns(registry, modelInfo) {
  const recName = modelInfo?.rec_name ?? (registry.name ? 'name' : null);
  /** @type {Column[]} */
  const columns = [];
  if (recName && registry[recName]) columns.push(column(recName, registry[recName], {}));
  else if (registry.display_name) columns.push(column('display_name', registry.display_name, {}));
  for (const [name, entry] of Object.entries(registry)) {
    if (columns.length >= DEFAULT_COLUMNS) break;
    if (name === recName || AUDIT.has(name) || name === 'active' || DEFAULT_SKIPPED.has(entry.type) || !isVisible(entry)) continue;
    columns.push(column(name, entry, {}));
  }
  return columns;
}

/**
 * The field paths one query reads: every column, the currency of each amount (symbol, position,
 * rounding) and `active` when archived rows may show.
 * @param {Column[]} columns @param {{archived?: boolean}} [options]
 */
export function readPaths(columns, { archived = false } = {}) {
  const paths = new Set(['display_name']);
  for (const c of columns) {
    paths.add(c.name);
    const currency = c.field.type === 'Monetary' ? c.field.currency_field : undefined;
    if (currency) for (const key of ['name', 'symbol', 'position', 'rounding']) paths.add(`${currency}.${key}`);
  }
  if (archived) paths.add('active');
  return [...paths];
}

/**
 * Fields worth grouping by: relations to one record, choices, yes/no and dates, then the list's own
 * text and integer columns (stored ones only; the server groups by stored values).
 * @param {Registry} registry @param {Column[]} columns
 * @returns {{name: string, label: string}[]}
 */
export function groupableFields(registry, columns) {
  const shown = new Set(columns.map((c) => c.name));
  const out = [];
  for (const [name, entry] of Object.entries(registry)) {
    if (!isStored(entry) || !isVisible(entry) || name === 'id' || name === 'identifier') continue;
    const natural = ['ManyToOne', 'Selection', 'Boolean', 'Date'].includes(entry.type);
    const shownScalar = shown.has(name) && ['Char', 'Integer'].includes(entry.type);
    if (natural || shownScalar) out.push({ name, label: entry.label });
  }
  return out.sort((a, b) => a.label.localeCompare(b.label));
}

/**
 * Fields a person may filter on: every stored, visible field but internals and binary data.
 * @param {Registry} registry
 * @returns {{name: string, label: string, entry: RegistryEntry}[]}
 */
export function filterableFields(registry) {
  const out = [];
  for (const [name, entry] of Object.entries(registry)) {
    if (!isStored(entry) || !isVisible(entry) || ['Binary', 'Json', 'File'].includes(entry.type) || name === 'display_name') continue;
    out.push({ name, label: entry.label, entry });
  }
  return out.sort((a, b) => a.label.localeCompare(b.label));
}
