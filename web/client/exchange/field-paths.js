/**
 * Which fields an export may name and an import may fill, as `/` paths (CONTRACTS C3:
 * `customer/name`, `order_lines/product`, `contact/identifier`), with their labels. Registries of
 * related models are read once per page and kept.
 */
import { api } from '../api.js';

/**
 * @typedef {import('../views/list/list-columns.js').Registry} Registry
 * @typedef {import('../views/list/list-columns.js').RegistryEntry} RegistryEntry
 * @typedef {{path: string, label: string, entry: RegistryEntry}} FieldPath
 */

const RELATIONAL = new Set(['ManyToOne', 'ManyToMany', 'OneToMany']);
/** Bytes are not spreadsheet cells. */
const UNEXPORTABLE = new Set(['Binary', 'File']);
/** Set by the platform on every write: never imported. */
const AUDIT = new Set(['created_date', 'created_by', 'updated_date', 'updated_by', 'display_name']);

/** @type {Map<string, Promise<Registry>>} */
const registries = new Map();

/**
 * A model's registry (`get_registry`), read once.
 * @param {string} model
 * @returns {Promise<Registry>}
 */
export function registryOf(model) {
  let found = registries.get(model);
  if (!found) {
    found = /** @type {Promise<Registry>} */ (api.registry(model));
    found.catch(() => registries.delete(model));
    registries.set(model, found);
  }
  return found;
}

/** @param {RegistryEntry} entry */
export function isRelational(entry) {
  return RELATIONAL.has(entry.type) && Boolean(entry.related_model);
}

/** @param {RegistryEntry} entry */
const visible = (entry) => entry.visible_setting_holds !== false && !/** @type {{internal?: boolean}} */ (entry).internal;

/**
 * Fields of a registry an export may name under `prefix` (`customer/`), the record's id and
 * identifier first, then by label.
 * @param {Registry} registry @param {{prefix?: string, labelPrefix?: string, importCompatible?: boolean}} [options]
 * @returns {FieldPath[]}
 */
export function exportableFields(registry, { prefix = '', labelPrefix = '', importCompatible = false } = {}) {
  /** @type {FieldPath[]} */
  const out = [];
  for (const [name, entry] of Object.entries(registry)) {
    if (!visible(entry) || UNEXPORTABLE.has(entry.type)) continue;
    // An import-compatible file holds only what an import can write back.
    if (importCompatible && !isImportable(name, entry)) continue;
    out.push({ path: `${prefix}${name}`, label: `${labelPrefix}${entry.label}`, entry });
  }
  return sortFields(out);
}

/**
 * Whether an import can write the field (ids and identifiers match records; the rest must be settable).
 * @param {string} name @param {RegistryEntry} entry
 */
export function isImportable(name, entry) {
  if (name === 'id' || name === 'identifier') return true;
  if (AUDIT.has(name) || entry.readonly || UNEXPORTABLE.has(entry.type)) return false;
  return !entry.computed;
}

/**
 * The columns an import may map to: every importable field, and for relations also the target
 * by its identifier (`customer/identifier`).
 * @param {Registry} registry
 * @returns {FieldPath[]}
 */
export function importTargets(registry) {
  /** @type {FieldPath[]} */
  const out = [];
  for (const [name, entry] of Object.entries(registry)) {
    if (!visible(entry) || !isImportable(name, entry)) continue;
    out.push({ path: name, label: entry.label, entry });
    if (isRelational(entry) && entry.type !== 'OneToMany') {
      out.push({ path: `${name}/identifier`, label: `${entry.label} / External ID`, entry });
    }
  }
  return sortFields(out);
}

/** The record's keys first (they decide matching), then by label. @param {FieldPath[]} fields */
function sortFields(fields) {
  const rank = (/** @type {FieldPath} */ f) => (f.path === 'id' ? 0 : f.path === 'identifier' ? 1 : 2);
  return fields.sort((a, b) => rank(a) - rank(b) || a.label.localeCompare(b.label));
}

/**
 * The label of a path, through the registries of the models it crosses (`Customer / Name`); the
 * path itself where a step is unknown.
 * @param {string} model @param {string} path
 */
export async function pathLabel(model, path) {
  const labels = [];
  let current = model;
  for (const step of path.split('/')) {
    const registry = current ? await registryOf(current).catch(() => null) : null;
    const entry = registry?.[step];
    if (!entry) {
      labels.push(step === 'identifier' ? 'External ID' : step);
      current = '';
      continue;
    }
    labels.push(entry.label);
    current = entry.related_model ?? '';
  }
  return labels.join(' / ');
}
