/**
 * Saved export column choices (`ExportPreset`, core): per user (a record rule keeps each user's
 * own) and per model, through the generic API like any record.
 */
import { api } from '../api.js';
import { qCondition } from '../views/list/q-expression.js';

/** @typedef {{id: number, name: string, export_fields: string[], import_compatible: boolean}} ExportPreset */

const FIELDS = ['name', 'export_fields', 'import_compatible'];

/** @param {string} model @returns {Promise<ExportPreset[]>} */
export async function listPresets(model) {
  const rows = /** @type {ExportPreset[]} */ (await api.query('ExportPreset', { fields: FIELDS, filter_str: qCondition('model', model), limit: 200 }));
  return rows.map((r) => ({ ...r, export_fields: Array.isArray(r.export_fields) ? r.export_fields : [] }));
}

/**
 * Saves the choice under `name`: a preset of that name is replaced, as a person re-saving a
 * template expects.
 * @param {string} model @param {{name: string, export_fields: string[], import_compatible: boolean}} preset
 * @param {ExportPreset[]} existing
 * @returns {Promise<number>} the preset's id
 */
export async function savePreset(model, preset, existing) {
  const same = existing.find((p) => p.name.trim().toLowerCase() === preset.name.trim().toLowerCase());
  if (same) {
    await api.update('ExportPreset', same.id, { export_fields: preset.export_fields, import_compatible: preset.import_compatible });
    return same.id;
  }
  const created = /** @type {{id: number}} */ (await api.create('ExportPreset', { ...preset, name: preset.name.trim(), model }));
  return created.id;
}

/** @param {number} id */
export function deletePreset(id) {
  return api.remove('ExportPreset', id);
}
